package wsapp

// An Event is what the chat room sends to its members, one JSON text
// message each:
//
//	{"kind":"joined","from":"ada","online":2}
//	{"kind":"message","from":"ada","text":"hello"}
//	{"kind":"left","from":"ada","online":1}
type Event struct {
	Kind   string `json:"kind"`             // "joined", "message" or "left"
	From   string `json:"from"`             // the member's name
	Text   string `json:"text,omitempty"`   // the message, for "message"
	Online int    `json:"online,omitempty"` // members in the room after a join or leave
}

// The kinds of Event.
const (
	KindJoined  = "joined"
	KindMessage = "message"
	KindLeft    = "left"
)
