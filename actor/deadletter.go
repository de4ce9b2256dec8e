package actor

// DeadLetter is a message that could not be delivered.
type DeadLetter struct {
	Recipient Ref   // the actor it was for; the zero Ref if none
	Sender    Ref   // its sender, if any
	Message   any   // the message
	Reason    error // why: wraps ErrStopped or ErrMailboxFull
}

type subscriber struct{ f func(DeadLetter) }

// DeadLetters returns how many messages could not be delivered so far.
func (s *System) DeadLetters() uint64 { return s.deadLetters.Load() }

// SubscribeDeadLetters calls f for every dead letter from now on, on the
// goroutine that found it undeliverable (a sender, or the stopped actor's
// last turn), until the returned cancel is called. f must not block.
func (s *System) SubscribeDeadLetters(f func(DeadLetter)) (cancel func()) {
	sub := &subscriber{f}
	s.subMu.Lock()
	defer s.subMu.Unlock()
	var list []*subscriber
	if p := s.subscribers.Load(); p != nil {
		list = append(list, *p...)
	}
	list = append(list, sub)
	s.subscribers.Store(&list)
	return func() {
		s.subMu.Lock()
		defer s.subMu.Unlock()
		var keep []*subscriber
		if p := s.subscribers.Load(); p != nil {
			for _, x := range *p {
				if x != sub {
					keep = append(keep, x)
				}
			}
		}
		s.subscribers.Store(&keep)
	}
}

// deadLetter counts and publishes an undeliverable message, and fails the
// Ask that sent it, if one did.
func (s *System) deadLetter(to *cell, msg any, sender *cell, reason error) {
	if msg == poisonPill {
		return // a Stop of an actor that had stopped
	}
	s.deadLetters.Add(1)
	if sender != nil && sender.future != nil {
		sender.future.fail(ErrStopped)
	}
	if p := s.subscribers.Load(); p != nil {
		d := DeadLetter{Recipient: Ref{to}, Sender: Ref{sender}, Message: msg, Reason: reason}
		if reason == nil {
			d.Reason = ErrStopped
		}
		for _, sub := range *p {
			sub.f(d)
		}
	}
}
