package load

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
)

// clientTLS returns the TLS configuration of connections for req: nil for
// an http:// target; for an https:// one, a copy of base (nil: verify
// against the system's roots) naming req's host unless base names one,
// offering HTTP/1.1 alone, the only protocol the generator speaks.
func clientTLS(base *tls.Config, req request) *tls.Config {
	if !req.https {
		return nil
	}
	c := &tls.Config{}
	if base != nil {
		c = base.Clone()
	}
	if c.ServerName == "" {
		c.ServerName = req.serverName
	}
	c.NextProtos = []string{"http/1.1"}
	return c
}

// dial opens a connection to addr, with custom (Config.Dial) when it is not
// nil and d otherwise, and, when tc is not nil, makes the TLS handshake on
// it, both within the dialer's timeout.
func dial(ctx context.Context, d *net.Dialer, custom func(context.Context, string, string) (net.Conn, error), addr string, tc *tls.Config) (net.Conn, error) {
	if d.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.Timeout)
		defer cancel()
	}
	var nc net.Conn
	var err error
	if custom == nil {
		nc, err = d.DialContext(ctx, "tcp", addr)
	} else {
		nc, err = custom(ctx, "tcp", addr)
		if err != nil {
			if nc != nil {
				nc.Close()
			}
			return nil, err
		}
		if nc == nil {
			return nil, fmt.Errorf("dial %s: Config.Dial returned neither a connection nor an error", addr)
		}
	}
	if err != nil || tc == nil {
		return nc, err
	}
	c := tls.Client(nc, tc)
	if err := c.HandshakeContext(ctx); err != nil {
		nc.Close()
		return nil, &handshakeError{addr: addr, err: err}
	}
	return c, nil
}

// handshakeError is a TLS handshake that failed: a certificate the client
// does not trust, a protocol the two sides do not share.
type handshakeError struct {
	addr string
	err  error
}

func (e *handshakeError) Error() string {
	return fmt.Sprintf("tls handshake with %s: %v", e.addr, e.err)
}
func (e *handshakeError) Unwrap() error { return e.err }
