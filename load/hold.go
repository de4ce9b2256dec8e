package load

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"
)

// ErrHold is matched by the error Hold returns when a connection could not
// be opened, used or kept.
var ErrHold = errors.New("hold idle connections")

// Held is a set of idle keep-alive connections opened by Hold. Close
// closes them; it is safe to call more than once, not concurrently with
// itself.
type Held struct {
	conns []net.Conn
}

// Len returns how many connections are held.
func (h *Held) Len() int { return len(h.conns) }

// Close closes every held connection.
func (h *Held) Close() error {
	var errs []error
	for _, c := range h.conns {
		errs = append(errs, c.Close())
	}
	h.conns = nil
	return errors.Join(errs...)
}

// Hold opens n keep-alive connections to t's server, sends t once on each
// and reads its response, then leaves them open and idle, with no goroutine
// on this side, until Close: the server is left holding n idle clients.
// Every response must be 2xx and keep the connection open. timeout bounds
// each connection's dial and exchange (zero: 30 s). Hold blocks until all
// are open or the first failure; it then stops opening and returns the
// connections opened so far with an error matching ErrHold that names the
// connection and the cause (the file descriptor limit, for one), so a
// caller may use them or Close them. It opens a bounded number at a time,
// as Run does, so the server's listen backlog does not overflow.
func Hold(ctx context.Context, t Target, n int, timeout time.Duration) (*Held, error) {
	req, err := buildRequest(t)
	if err != nil {
		return nil, err
	}
	if timeout == 0 {
		timeout = defaultTimeout
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	dialer := net.Dialer{Timeout: timeout}
	conns := make([]net.Conn, n)
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	next := make(chan int)
	for range min(n, dialConcurrency) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				c, err := holdOne(ctx, &dialer, &req, timeout)
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("%w: connection %d of %d: %w", ErrHold, i+1, n, describeHoldError(err))
					}
					mu.Unlock()
					cancel()
					continue
				}
				conns[i] = c
			}
		}()
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	held := &Held{}
	for _, c := range conns {
		if c != nil {
			held.conns = append(held.conns, c)
		}
	}
	if firstErr == nil && ctx.Err() != nil && len(held.conns) < n {
		firstErr = fmt.Errorf("%w: %d of %d opened: %w", ErrHold, len(held.conns), n, context.Cause(ctx))
	}
	return held, firstErr
}

// holdOne opens one connection and makes one exchange on it.
func holdOne(ctx context.Context, dialer *net.Dialer, req *request, timeout time.Duration) (net.Conn, error) {
	nc, err := dial(ctx, dialer, nil, req.addr, clientTLS(nil, *req))
	if err != nil {
		return nil, err
	}
	fail := func(err error) (net.Conn, error) {
		nc.Close()
		if ctx.Err() != nil { // the deadline the AfterFunc set, not the server
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { _ = nc.SetDeadline(aLongTimeAgo) })
	defer stop()
	_ = nc.SetDeadline(time.Now().Add(timeout))
	if _, err := nc.Write(req.raw); err != nil {
		return fail(err)
	}
	br := bufio.NewReaderSize(nc, readBufferSize)
	var h responseHead
	if _, err := readHead(br, &h); err != nil {
		return fail(err)
	}
	if _, err := readBody(br, &h, req.head, nil); err != nil {
		return fail(err)
	}
	switch {
	case !is2xx(h.status):
		return fail(fmt.Errorf("status %d", h.status))
	case h.close || h.toClose:
		return fail(errors.New("the server closes the connection after the response"))
	case br.Buffered() > 0:
		return fail(errors.New("bytes after the response"))
	}
	if !stop() {
		return fail(context.Cause(ctx))
	}
	_ = nc.SetDeadline(time.Time{})
	return nc, nil
}

// describeHoldError adds the machine's limit to the errors it caused.
func describeHoldError(err error) error {
	switch {
	case errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE):
		return fmt.Errorf("%w (%s)", err, describeFileLimit())
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return fmt.Errorf("%w (%s)", err, describePortRange())
	}
	return err
}

// ConnectionLimit returns how many connections this process can open to
// one server address, and what sets that number: the file descriptor
// limit (RLIMIT_NOFILE, which the Go runtime raises to its hard limit at
// start), less 64 for the process's own files, or the local port range. It
// returns 0 and "" where neither can be read.
func ConnectionLimit() (int, string) {
	limit, limitOK := fileLimit()
	lo, hi, rangeOK := portRange()
	return connectionLimit(limit, limitOK, lo, hi, rangeOK)
}

// connectionLimit is ConnectionLimit given the descriptor limit and the
// port range, each with whether it could be read.
func connectionLimit(limit uint64, limitOK bool, lo, hi int, rangeOK bool) (int, string) {
	n, why := 0, ""
	if limitOK && limit > 64 {
		n, why = int(limit-64), fmt.Sprintf("the file descriptor limit (RLIMIT_NOFILE %d, less 64)", limit)
	}
	if rangeOK && (n == 0 || hi-lo+1 < n) {
		n, why = hi-lo+1, fmt.Sprintf("the local port range (net.ipv4.ip_local_port_range %d-%d)", lo, hi)
	}
	return n, why
}
