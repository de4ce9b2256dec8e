package remote

import (
	"encoding/binary"
	"errors"

	"github.com/loomrt/loom/actor"
)

// The wire format. One NATS message carries a batch: a header, then frames.
//
//	batch  = 'L' version:u8 instance:u64le nameLen:u8 name frame*
//	frame  = length:u32le body                   (length of body)
//	body   = tell | kind:u8 to:str rest
//	str    = len:uvarint bytes
//	tell       = kindTell same:u8 [to:str] [senderNode:str senderPath:str] [type:str] trace:str payload
//	trace      = (key:str value:str)*        (the sender's trace context)
//	signal     rest = signal:u8 from:str        (from read as senderPath)
//	terminated rest = actor:str reason:u8
//	fail       rest = reason:u8 text:str         (to is an Ask's "$ask/N")
//
// senderNode "" is the batch's node; senderPath "" is no sender. A tell's
// same bits (sameTo, sameSender, sameType) leave out the fields equal to the
// previous tell's in the batch: a sender's run of messages to one actor
// carries its addresses and type once, and the receiver resolves them once.
const (
	magic   = 'L'
	version = 2

	kindTell byte = iota + 1
	kindSignal
	kindTerminated
	kindFail
)

// The same bits of a tell frame.
const (
	sameTo byte = 1 << iota
	sameSender
	sameType

	sameAll = sameTo | sameSender | sameType
)

// Reasons a terminated or fail frame gives.
const (
	reasonStopped byte = iota
	reasonNotFound
	reasonUnknownType
	reasonOther
)

var errMalformed = errors.New("remote: malformed batch")

// appendHeader appends a batch header for node name, incarnation instance.
func appendHeader(b []byte, name string, instance uint64) []byte {
	b = append(b, magic, version)
	b = binary.LittleEndian.AppendUint64(b, instance)
	b = append(b, byte(len(name)))
	return append(b, name...)
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// beginFrame reserves a frame's length and writes its kind; endFrame fills
// the length in.
func beginFrame(b []byte, kind byte) ([]byte, int) {
	start := len(b)
	return append(b, 0, 0, 0, 0, kind), start
}

func endFrame(b []byte, start int) []byte {
	binary.LittleEndian.PutUint32(b[start:], uint32(len(b)-start-4))
	return b
}

// carrier holds a message's trace context as key and value pairs: an
// actor.Carrier for the System's Tracer.
type carrier []string

var _ actor.Carrier = (*carrier)(nil)

func (c *carrier) Get(key string) string {
	for i := 0; i+1 < len(*c); i += 2 {
		if (*c)[i] == key {
			return (*c)[i+1]
		}
	}
	return ""
}

func (c *carrier) Set(key, value string) {
	for i := 0; i+1 < len(*c); i += 2 {
		if (*c)[i] == key {
			(*c)[i+1] = value
			return
		}
	}
	*c = append(*c, key, value)
}

func (c *carrier) Keys() []string {
	keys := make([]string, 0, len(*c)/2)
	for i := 0; i+1 < len(*c); i += 2 {
		keys = append(keys, (*c)[i])
	}
	return keys
}

// appendTrace appends c as a trace field.
func appendTrace(b []byte, c carrier) []byte {
	var size int
	for _, s := range c {
		size += uvarintLen(len(s)) + len(s)
	}
	b = binary.AppendUvarint(b, uint64(size))
	for _, s := range c {
		b = appendStr(b, s)
	}
	return b
}

func uvarintLen(x int) int {
	n := 1
	for ; x >= 0x80; x >>= 7 {
		n++
	}
	return n
}

// readTrace reads a trace field; nil if it is malformed.
func readTrace(field []byte) carrier {
	r := reader{b: field}
	var c carrier
	for len(r.b) > 0 && !r.bad {
		c = append(c, string(r.str()))
	}
	if r.bad || len(c)%2 != 0 {
		return nil
	}
	return c
}

// reader reads a batch. Every read checks bounds: a malformed batch is an
// error, never a panic.
type reader struct {
	b    []byte
	bad  bool
	prev frame // the batch's last tell, for the next one's same fields
}

func (r *reader) byte() byte {
	if len(r.b) < 1 {
		r.bad = true
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *reader) bytes(n int) []byte {
	if n < 0 || len(r.b) < n {
		r.bad = true
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) str() []byte {
	n, k := binary.Uvarint(r.b)
	if k <= 0 || n > uint64(len(r.b)-k) {
		r.bad = true
		return nil
	}
	r.b = r.b[k:]
	return r.bytes(int(n))
}

// header reads a batch header.
func (r *reader) header() (name []byte, instance uint64, err error) {
	if r.byte() != magic || r.byte() != version {
		return nil, 0, errMalformed
	}
	raw := r.bytes(8)
	if r.bad {
		return nil, 0, errMalformed
	}
	instance = binary.LittleEndian.Uint64(raw)
	name = r.bytes(int(r.byte()))
	if r.bad || len(name) == 0 || instance == 0 {
		return nil, 0, errMalformed
	}
	return name, instance, nil
}

// frame is one decoded frame; its byte slices point into the batch.
type frame struct {
	kind       byte
	same       byte // of a tell: the fields it shares with the previous tell
	to         []byte
	senderNode []byte
	senderPath []byte
	typeName   []byte
	trace      []byte
	payload    []byte
	signal     byte
	actor      []byte
	reason     byte
	text       []byte
}

// next reads the next frame into f; false at the end of the batch, or with
// r.bad set when the rest is malformed.
func (r *reader) next(f *frame) bool {
	if len(r.b) == 0 {
		return false
	}
	raw := r.bytes(4)
	if r.bad {
		return false
	}
	body := reader{b: r.bytes(int(binary.LittleEndian.Uint32(raw)))}
	if r.bad {
		return false
	}
	*f = frame{kind: body.byte()}
	switch f.kind {
	case kindTell:
		f.same = body.byte()
		if f.same&^sameAll != 0 || f.same != 0 && r.prev.kind != kindTell {
			r.bad = true
			return false
		}
		if f.same&sameTo != 0 {
			f.to = r.prev.to
		} else {
			f.to = body.str()
		}
		if f.same&sameSender != 0 {
			f.senderNode, f.senderPath = r.prev.senderNode, r.prev.senderPath
		} else {
			f.senderNode, f.senderPath = body.str(), body.str()
		}
		if f.same&sameType != 0 {
			f.typeName = r.prev.typeName
		} else {
			f.typeName = body.str()
		}
		f.trace = body.str()
		f.payload = body.b
		body.b = nil
		r.prev = *f
	case kindSignal:
		f.to = body.str()
		f.signal, f.senderPath = body.byte(), body.str()
	case kindTerminated:
		f.to = body.str()
		f.actor, f.reason = body.str(), body.byte()
	case kindFail:
		f.to = body.str()
		f.reason, f.text = body.byte(), body.str()
	default:
		body.bad = true
	}
	if body.bad || len(body.b) != 0 || len(f.to) == 0 {
		r.bad = true
		return false
	}
	return true
}
