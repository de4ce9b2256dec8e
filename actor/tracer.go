package actor

import "context"

// A Tracer follows messages from their send to their receive: the hook an
// observability package (actor/otelactor) sets with WithTracer, so that the
// actor package itself links no tracing library. Without one, a message
// still carries its sender's context (Context.Context) and nothing else is
// called.
//
// Every message Send saw meets exactly one Done: after its Receive returns
// or panics, or when it leaves the mailbox undelivered (the actor stopped),
// with a non-nil failure. Lifecycle signals, Stop and replies to an Ask
// meet none of these.
type Tracer interface {
	// Send is called on the sending goroutine once msg has room in the
	// mailbox, just before it is queued. ctx is the sender's: Send's and
	// Ask's context, the receive's for a message sent from a Receive, or
	// context.Background for Ref.Tell. What it returns rides in the
	// message's envelope.
	Send(ctx context.Context, e Envelope) context.Context
	// Receive is called on the actor's turn before Receive, with the
	// context Send returned; what it returns is Context.Context during the
	// Receive.
	Receive(ctx context.Context, e Envelope) context.Context
	// Done is called when the message leaves the actor: with the context
	// Receive returned and a nil failure, or what Receive panicked with; or,
	// for a message never received, with the context Send returned and
	// ErrStopped.
	Done(ctx context.Context, e Envelope, failure any)
	// Inject writes what continues ctx's trace in another process into
	// carrier (a transport's message headers).
	Inject(ctx context.Context, carrier Carrier)
	// Extract returns ctx with the trace carrier continues.
	Extract(ctx context.Context, carrier Carrier) context.Context
}

// An Envelope is what a Tracer sees of a message. It is passed by value and
// costs no allocation.
type Envelope struct {
	To      Ref // the recipient
	Sender  Ref // the sender; for an Ask, its reply address
	Message any
	Ask     bool // sent by Ask: the sender awaits a reply
}

// A Carrier holds a message's trace context as text fields, the headers a
// transport sends. Its methods are those of OpenTelemetry's
// propagation.TextMapCarrier, so a carrier of either kind is the other.
type Carrier interface {
	// Get returns the value of key, "" if none.
	Get(key string) string
	// Set stores value under key.
	Set(key, value string)
	// Keys lists the keys stored.
	Keys() []string
}

// WithTracer sets the System's Tracer; nil, the default, traces nothing.
func WithTracer(t Tracer) Option {
	return func(s *System) { s.tracer = t }
}

// Tracer returns the System's Tracer, nil if none.
func (s *System) Tracer() Tracer { return s.tracer }

// InjectContext writes ctx's trace context into carrier through the
// System's Tracer, for a transport to send with a message; with no Tracer it
// writes nothing.
func (s *System) InjectContext(ctx context.Context, carrier Carrier) {
	if s.tracer != nil {
		s.tracer.Inject(ctx, carrier)
	}
}

// ExtractContext returns ctx continuing the trace in carrier, through the
// System's Tracer; with no Tracer it returns ctx.
func (s *System) ExtractContext(ctx context.Context, carrier Carrier) context.Context {
	if s.tracer != nil {
		return s.tracer.Extract(ctx, carrier)
	}
	return ctx
}

// envelope is what c's Tracer sees of msg sent to c.
func (c *cell) envelope(msg any, sender *cell) Envelope {
	return Envelope{To: Ref{c}, Sender: Ref{sender}, Message: msg, Ask: sender != nil && sender.future != nil}
}
