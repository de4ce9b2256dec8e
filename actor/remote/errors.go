package remote

import "errors"

var (
	// ErrNodeDown is the reason of what fails because a node stopped
	// sending heartbeats for the failure bound (WithFailureDetector), or
	// came back as a new incarnation: Terminated's Reason, an Ask's error,
	// a dead letter's Reason.
	ErrNodeDown = errors.New("remote: node down")
	// ErrDeclaredDown is wrapped, beside ErrNodeDown, by the Reason of the
	// Down event for a node that had declared this node down and refused
	// it: the cluster ignores this incarnation from then on, as Akka's
	// quarantine does, and a node must restart to rejoin.
	ErrDeclaredDown = errors.New("remote: this node was declared down")
	// ErrNodeLeft is the reason of what fails because a node left the
	// cluster (Node.Leave).
	ErrNodeLeft = errors.New("remote: node left")
	// ErrUnknownType is the reason a message no codec handles goes to dead
	// letters at Tell, and one that arrives with a type name this node
	// does not know.
	ErrUnknownType = errors.New("remote: no codec for message type")
	// ErrBackpressure is the reason a Tell goes to dead letters when the
	// messages waiting for one node reach WithMaxPending.
	ErrBackpressure = errors.New("remote: too much pending for node")
	// ErrClosed is returned once the Node has left.
	ErrClosed = errors.New("remote: node closed")
	// ErrNotFound wraps the reason a Lookup or SpawnOn found nothing.
	ErrNotFound = errors.New("remote: not found")
	// ErrInvalid is returned for a bad argument: a node, cluster, kind or
	// codec name, an option of Join, a nil System or Ref.
	ErrInvalid = errors.New("remote: invalid argument")
)
