package web_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/web"
	"github.com/loomrt/loom/web/internal/webtest"
)

// serveTLS serves app on a loopback port and returns its https:// URL and
// stop (as serveApp's).
func serveTLS(t *testing.T, app *web.App) (string, func() error) {
	t.Helper()
	url, stop := serveApp(t, app)
	return "https://" + strings.TrimPrefix(url, "http://"), stop
}

// TestTLSHandshakeVerifiesTheChain serves a certificate signed by a CA made
// for the test: a client trusting that CA completes the handshake, gets
// HTTP/2 by ALPN and its request carries the connection's TLS state; a
// client trusting only the system's roots refuses the certificate.
func TestTLSHandshakeVerifiesTheChain(t *testing.T) {
	certs := webtest.NewCerts(t)
	app := newApp(t, web.WithTLS(certs.CertFile, certs.KeyFile))
	app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
		if r.TLS == nil || !r.TLS.HandshakeComplete {
			return web.Errorf(500, "no TLS state on the request")
		}
		_, err := io.WriteString(w, r.Proto+" "+r.TLS.NegotiatedProtocol)
		return err
	})
	url, _ := serveTLS(t, app)

	resp, err := certs.Client(t).Get(url + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "HTTP/2.0 h2" || resp.TLS == nil {
		t.Errorf("got %d %q (TLS state %v); want 200 %q", resp.StatusCode, body, resp.TLS != nil, "HTTP/2.0 h2")
	}
	if chain := resp.TLS.VerifiedChains; len(chain) != 1 || len(chain[0]) != 2 || chain[0][1].Subject.CommonName != "loom test CA" {
		t.Errorf("verified chains %v; want the leaf and the test CA", chain)
	}

	untrusting := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: x509.NewCertPool()}}
	defer untrusting.CloseIdleConnections()
	_, err = (&http.Client{Transport: untrusting}).Get(url + "/")
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Errorf("a client that does not trust the CA: got %v; want x509.UnknownAuthorityError", err)
	}
}

// TestHTTP2MultiplexesOnOneConnection sends requests that each wait until
// all of them are in their handlers, through a client allowed one
// connection: they can only all get there by sharing it, as HTTP/2 streams.
func TestHTTP2MultiplexesOnOneConnection(t *testing.T) {
	const n = 8
	certs := webtest.NewCerts(t)
	app := newApp(t, web.WithTLS(certs.CertFile, certs.KeyFile))
	var mu sync.Mutex
	remotes := map[string]bool{}
	var arrived sync.WaitGroup
	arrived.Add(n)
	all := make(chan struct{})
	go func() { arrived.Wait(); close(all) }()
	app.Get("/wait", func(w http.ResponseWriter, r *http.Request) error {
		mu.Lock()
		remotes[r.RemoteAddr] = true
		mu.Unlock()
		arrived.Done()
		select {
		case <-all:
		case <-time.After(20 * time.Second):
			return web.Errorf(504, "only some requests arrived")
		}
		_, err := io.WriteString(w, r.Proto)
		return err
	})
	url, _ := serveTLS(t, app)
	client := certs.Client(t)
	client.Transport.(*http.Transport).MaxConnsPerHost = 1

	results := make([]<-chan webtest.Result, n)
	for i := range results {
		results[i] = webtest.GetAsync(client, url+"/wait")
	}
	for i, got := range results {
		if r := <-got; r.Err != nil || r.Status != 200 || r.Body != "HTTP/2.0" {
			t.Errorf("request %d: got %d %q %v; want 200 HTTP/2.0", i, r.Status, r.Body, r.Err)
		}
	}
	if len(remotes) != 1 {
		t.Errorf("requests came over %d connections; want 1", len(remotes))
	}
}

// TestHTTP2StreamsOnARoutesExecutor: each stream of one HTTP/2 connection
// is a request on its route's executor. With a limit of 2 and no queue,
// two streams hold the slots, the next ones on the same connection are
// refused with 503 and Retry-After at once, a route on another executor is
// served meanwhile, and the held streams finish once released.
func TestHTTP2StreamsOnARoutesExecutor(t *testing.T) {
	certs := webtest.NewCerts(t)
	app := newApp(t, web.WithTLS(certs.CertFile, certs.KeyFile))
	slots := loom.Limit(2, loom.WithName("slots"))
	t.Cleanup(func() { _ = slots.Shutdown(context.Background()) })
	var entered sync.WaitGroup
	entered.Add(2)
	leave := make(chan struct{})
	release := sync.OnceFunc(func() { close(leave) })
	defer release()
	app.Get("/held", func(w http.ResponseWriter, r *http.Request) error {
		entered.Done()
		<-leave
		_, err := io.WriteString(w, r.Proto)
		return err
	}, web.WithExecutor(slots))
	app.Get("/free", func(w http.ResponseWriter, r *http.Request) error {
		_, err := io.WriteString(w, r.Proto)
		return err
	})
	url, _ := serveTLS(t, app)
	client := certs.Client(t)
	client.Transport.(*http.Transport).MaxConnsPerHost = 1

	held := []<-chan webtest.Result{webtest.GetAsync(client, url+"/held"), webtest.GetAsync(client, url+"/held")}
	entered.Wait()
	quick := *client // a refusal comes at once; a request queued would wait for the release
	quick.Timeout = 20 * time.Second
	for i := range 2 {
		resp, err := quick.Get(url + "/held")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || resp.ProtoMajor != 2 {
			t.Errorf("stream %d past the limit: got %d %s, Retry-After %q; want 503 over HTTP/2 with Retry-After",
				i, resp.StatusCode, resp.Proto, resp.Header.Get("Retry-After"))
		}
	}
	if r := <-webtest.GetAsync(client, url+"/free"); r.Err != nil || r.Status != 200 || r.Body != "HTTP/2.0" {
		t.Errorf("a route on another executor: got %d %q %v; want 200 HTTP/2.0", r.Status, r.Body, r.Err)
	}
	release()
	for i, got := range held {
		if r := <-got; r.Err != nil || r.Status != 200 || r.Body != "HTTP/2.0" {
			t.Errorf("held stream %d: got %d %q %v; want 200 HTTP/2.0", i, r.Status, r.Body, r.Err)
		}
	}
	if s := slots.Stats(); s.Completed != 2 || s.Rejected != 2 {
		t.Errorf("the route's executor completed %d and rejected %d; want 2 and 2", s.Completed, s.Rejected)
	}
}

// TestH2CWithPriorKnowledge: WithH2C serves HTTP/2 in cleartext to a client
// that opens with the preface, and HTTP/1.1 still; without it the same
// client is refused.
func TestH2CWithPriorKnowledge(t *testing.T) {
	var h2c http.Protocols
	h2c.SetUnencryptedHTTP2(true)
	for _, tc := range []struct {
		name  string
		opts  []web.AppOption
		proto string // "": the h2c request fails
	}{
		{"WithH2C", []web.AppOption{web.WithH2C()}, "HTTP/2.0"},
		{"default", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app := newApp(t, tc.opts...)
			app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
				_, err := io.WriteString(w, r.Proto)
				return err
			})
			url, _ := serveApp(t, app)
			tr := &http.Transport{Protocols: &h2c}
			defer tr.CloseIdleConnections()
			r := <-webtest.GetAsync(&http.Client{Transport: tr}, url+"/")
			switch {
			case tc.proto == "" && r.Err == nil:
				t.Errorf("h2c request: got %d %q; want it to fail", r.Status, r.Body)
			case tc.proto != "" && (r.Err != nil || r.Body != tc.proto):
				t.Errorf("h2c request: got %d %q %v; want 200 %s", r.Status, r.Body, r.Err, tc.proto)
			}
			plain := &http.Transport{}
			defer plain.CloseIdleConnections()
			if r := <-webtest.GetAsync(&http.Client{Transport: plain}, url+"/"); r.Err != nil || r.Body != "HTTP/1.1" {
				t.Errorf("HTTP/1.1 request: got %d %q %v; want 200 HTTP/1.1", r.Status, r.Body, r.Err)
			}
		})
	}
}

// TestBodyLimitsAndTimeoutOverHTTP2 checks that the body limit and the body
// timeout answer HTTP/2 requests as they answer HTTP/1.1 ones: 413 past the
// limit, declared or not, and 408 for a body that stalls.
func TestBodyLimitsAndTimeoutOverHTTP2(t *testing.T) {
	certs := webtest.NewCerts(t)
	app := newApp(t, web.WithTLS(certs.CertFile, certs.KeyFile),
		web.WithBodyLimit(1024), web.WithBodyTimeout(300*time.Millisecond))
	app.Post("/echo", func(w http.ResponseWriter, r *http.Request) error {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	})
	url, _ := serveTLS(t, app)
	client := certs.Client(t)

	post := func(body io.Reader, length int64) (int, string, error) {
		req, err := http.NewRequest("POST", url+"/echo", body)
		if err != nil {
			return 0, "", err
		}
		req.ContentLength = length
		resp, err := client.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		if resp.ProtoMajor != 2 {
			t.Errorf("served over %s; want HTTP/2", resp.Proto)
		}
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), err
	}
	big := strings.Repeat("x", 1025)
	for _, tc := range []struct {
		name   string
		body   io.Reader
		length int64 // -1: not declared
		status int
	}{
		{"within the limit", strings.NewReader(big[:1024]), 1024, 200},
		{"declared past the limit", strings.NewReader(big), 1025, 413},
		{"undeclared past the limit", io.MultiReader(strings.NewReader(big)), -1, 413},
		{"stalled body", stalled(t, "{\"half\":"), -1, 408},
	} {
		status, body, err := post(tc.body, tc.length)
		if err != nil || status != tc.status {
			t.Errorf("%s: got %d %q %v; want %d", tc.name, status, body, err, tc.status)
		}
	}
}

// stalled is a body that sends prefix, then nothing until t ends.
func stalled(t *testing.T, prefix string) io.Reader {
	pr, pw := io.Pipe()
	go func() { _, _ = io.WriteString(pw, prefix) }()
	t.Cleanup(func() { pw.Close() })
	return pr
}

// TestWriteTimeoutOverHTTP2: a client that stops reading a large HTTP/2
// response stops its stream only (flow control), not the connection, so
// the connection's deadline would never fire; the stream's does, and the
// handler's write fails with os.ErrDeadlineExceeded. A client that keeps
// reading slowly gets the whole body, for longer than the timeout.
func TestWriteTimeoutOverHTTP2(t *testing.T) {
	// Long enough that a busy machine (a GC, descheduled goroutines on a
	// loaded box) still moves a 64 KiB step of the stream within ¾ of it: at
	// 1 s, 256 KiB steps ran out of it under a load of 20 on 2 cores.
	const timeout = 3 * time.Second
	const size = 12 << 20
	// The client's window is small, so that the handler writes for as long
	// as the slow reader reads, well past the timeout.
	const window = 512 << 10
	certs := webtest.NewCerts(t)
	app := newApp(t, web.WithTLS(certs.CertFile, certs.KeyFile), web.WithWriteTimeout(timeout))
	writeErr := make(chan error, 1)
	app.Get("/big", func(w http.ResponseWriter, r *http.Request) error {
		_, err := w.Write(bytes.Repeat([]byte("x"), size))
		writeErr <- err
		return nil
	})
	url, _ := serveTLS(t, app)
	client := certs.Client(t)
	client.Transport.(*http.Transport).HTTP2 = &http.HTTP2Config{MaxReceiveBufferPerStream: window}

	app.Get("/bigstring", func(w http.ResponseWriter, r *http.Request) error {
		_, err := io.WriteString(w, strings.Repeat("x", size))
		writeErr <- err
		return nil
	})
	// The same on a server whose Protocols name HTTP/2 (servesHTTP2).
	both := new(http.Protocols)
	both.SetHTTP1(true)
	both.SetHTTP2(true)
	named := newApp(t, web.WithTLS(certs.CertFile, certs.KeyFile), web.WithWriteTimeout(timeout),
		web.WithServerConfig(func(s *http.Server) { s.Protocols = both }))
	named.Get("/big", func(w http.ResponseWriter, r *http.Request) error {
		_, err := w.Write(bytes.Repeat([]byte("x"), size))
		writeErr <- err
		return nil
	})
	namedURL, _ := serveTLS(t, named)

	for _, tc := range []struct{ name, target string }{
		{"stops reading", url + "/big"}, {"stops reading a string", url + "/bigstring"}, {"stops reading, Protocols set", namedURL + "/big"},
	} {
		target := tc.target
		t.Run(tc.name, func(t *testing.T) {
			resp, err := client.Get(target)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.ProtoMajor != 2 {
				t.Fatalf("%s: %s; want HTTP/2", target, resp.Proto)
			}
			select {
			case err := <-writeErr:
				if !errors.Is(err, os.ErrDeadlineExceeded) {
					t.Errorf("handler's write: got %v; want os.ErrDeadlineExceeded", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the handler's write still blocked 30 s after the client stopped reading")
			}
		})
	}
	t.Run("reads slowly", func(t *testing.T) {
		resp, err := client.Get(url + "/big")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		start := time.Now()
		// 512 KiB every 250 ms: 6 s for the body, the handler's write
		// waiting on the window throughout.
		var n int
		var readErr error
		buf := make([]byte, window)
		for {
			m, err := io.ReadFull(resp.Body, buf)
			n += m
			if err != nil {
				readErr = err
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
		if n != size || time.Since(start) < 3*timeout/2 {
			t.Errorf("read %d bytes in %v (then %v); want %d, over longer than %v", n, time.Since(start), readErr, size, 3*timeout/2)
		}
		if err := <-writeErr; err != nil {
			t.Errorf("handler's write: %v", err)
		}
	})
}

// TestWriteTimeoutOverHTTP2TrickleReader: an HTTP/2 client that reads
// steadily but slowly, a frame every 300 ms through a receive window of one
// frame, gets its whole response: the stream's deadline restarts as the
// frames go out (writetimeout.go, streamChunk). Each 64 KiB step of the
// handler's write takes about 1.2 s, and a reader held up to 750 ms a frame
// by a busy machine still moves it within ¾ of the 4 s timeout. A step of
// 256 KiB would wait for 15 frames read, 14 sleeps apart, at least 4.2 s:
// the deadline would cut the stream although data moved.
func TestWriteTimeoutOverHTTP2TrickleReader(t *testing.T) {
	const timeout = 4 * time.Second
	const size = 384 << 10
	const frame = 16 << 10
	certs := webtest.NewCerts(t)
	app := newApp(t, web.WithTLS(certs.CertFile, certs.KeyFile), web.WithWriteTimeout(timeout))
	writeErr := make(chan error, 1)
	app.Get("/big", func(w http.ResponseWriter, r *http.Request) error {
		_, err := w.Write(bytes.Repeat([]byte("x"), size))
		writeErr <- err
		return nil
	})
	url, _ := serveTLS(t, app)
	client := certs.Client(t)
	client.Transport.(*http.Transport).HTTP2 = &http.HTTP2Config{MaxReceiveBufferPerStream: frame}

	resp, err := client.Get(url + "/big")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Fatalf("%s; want HTTP/2", resp.Proto)
	}
	var n int
	buf := make([]byte, frame)
	for {
		m, err := io.ReadFull(resp.Body, buf)
		n += m
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			t.Fatalf("read %d bytes, then %v; want %d", n, err, size)
		}
		time.Sleep(300 * time.Millisecond)
	}
	if n != size {
		t.Errorf("read %d bytes; want %d", n, size)
	}
	if err := <-writeErr; err != nil {
		t.Errorf("handler's write: %v; want nil for a client that kept reading", err)
	}
}

// TestGracefulShutdownDrainsHTTP2Streams: streams in flight on one
// connection when Serve is told to stop each get their whole response once
// the listener has closed (so shutdown is under way), and Serve returns nil.
func TestGracefulShutdownDrainsHTTP2Streams(t *testing.T) {
	const n = 4
	certs := webtest.NewCerts(t)
	app := newApp(t, web.WithTLS(certs.CertFile, certs.KeyFile), web.WithShutdownGrace(20*time.Second))
	var entered sync.WaitGroup
	entered.Add(n)
	leave := make(chan struct{})
	release := sync.OnceFunc(func() { close(leave) })
	defer release() // on a failure, before the cleanup's stop
	var mu sync.Mutex
	remotes := map[string]bool{}
	app.Get("/slow", func(w http.ResponseWriter, r *http.Request) error {
		mu.Lock()
		remotes[r.RemoteAddr] = true
		mu.Unlock()
		entered.Done()
		<-leave
		_, err := io.WriteString(w, "finished "+r.Proto)
		return err
	})
	url, stop := serveTLS(t, app)
	client := certs.Client(t)
	client.Transport.(*http.Transport).MaxConnsPerHost = 1
	results := make([]<-chan webtest.Result, n)
	for i := range results {
		results[i] = webtest.GetAsync(client, url+"/slow")
	}
	entered.Wait()
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	addr := strings.TrimPrefix(url, "https://")
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			break // the listener is closed: shutdown is under way, the streams still in their handlers
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("the listener still accepts 20 s after Serve was told to stop")
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case err := <-stopped:
		t.Fatalf("Serve returned %v with %d streams still in their handlers", err, n)
	default:
	}
	release()
	for i, got := range results {
		if r := <-got; r.Err != nil || r.Status != 200 || r.Body != "finished HTTP/2.0" {
			t.Errorf("in-flight stream %d: got %d %q %v; want 200 %q", i, r.Status, r.Body, r.Err, "finished HTTP/2.0")
		}
	}
	if len(remotes) != 1 {
		t.Errorf("the streams came over %d connections; want 1", len(remotes))
	}
	if err := <-stopped; err != nil {
		t.Errorf("Serve: got %v; want nil after a clean shutdown", err)
	}
}

// TestTLSConfig serves through WithTLSConfig: a GetCertificate asked at
// each handshake (rotation), a config changed after New (the App kept a
// copy), a config whose MinVersion holds with WithTLS's pair added, and one
// naming its own protocols; each over a handshake that checks the chain.
func TestTLSConfig(t *testing.T) {
	certs := webtest.NewCerts(t)
	pair, err := tls.LoadX509KeyPair(certs.CertFile, certs.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	var asked atomic.Int64
	changed := &tls.Config{Certificates: []tls.Certificate{pair}}
	for _, tc := range []struct {
		name      string
		opts      []web.AppOption
		afterNew  func()
		clientMax uint16 // 0: any version
		proto     string // "": the handshake fails
	}{
		{"GetCertificate", []web.AppOption{web.WithTLSConfig(&tls.Config{
			GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { asked.Add(1); return &pair, nil },
		})}, nil, 0, "HTTP/2.0"},
		{"changed after New", []web.AppOption{web.WithTLSConfig(changed)}, func() { changed.Certificates = nil }, 0, "HTTP/2.0"},
		{"MinVersion with WithTLS", []web.AppOption{web.WithTLSConfig(&tls.Config{MinVersion: tls.VersionTLS13}),
			web.WithTLS(certs.CertFile, certs.KeyFile)}, nil, 0, "HTTP/2.0"},
		{"MinVersion refuses TLS 1.2", []web.AppOption{web.WithTLSConfig(&tls.Config{MinVersion: tls.VersionTLS13}),
			web.WithTLS(certs.CertFile, certs.KeyFile)}, nil, tls.VersionTLS12, ""},
		{"NextProtos of its own", []web.AppOption{web.WithTLSConfig(&tls.Config{Certificates: []tls.Certificate{pair},
			NextProtos: []string{"http/1.1"}})}, nil, 0, "HTTP/1.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app := newApp(t, tc.opts...)
			if tc.afterNew != nil {
				tc.afterNew()
			}
			app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
				_, err := io.WriteString(w, r.Proto)
				return err
			})
			url, _ := serveTLS(t, app)
			client := certs.Client(t)
			client.Transport.(*http.Transport).TLSClientConfig.MaxVersion = tc.clientMax
			client.Timeout = 20 * time.Second
			r := <-webtest.GetAsync(client, url+"/")
			switch {
			case tc.proto == "" && r.Err == nil:
				t.Errorf("got %d %q; want the handshake to fail", r.Status, r.Body)
			case tc.proto != "" && (r.Err != nil || r.Status != 200 || r.Body != tc.proto):
				t.Errorf("got %d %q %v; want 200 %s", r.Status, r.Body, r.Err, tc.proto)
			}
		})
	}
	if asked.Load() == 0 {
		t.Errorf("GetCertificate was never asked")
	}
}

// TestTLSFilesThatDoNotLoad: New refuses a certificate or key it cannot
// read or that do not match, naming the file.
func TestTLSFilesThatDoNotLoad(t *testing.T) {
	certs := webtest.NewCerts(t)
	other := webtest.NewCerts(t)
	missing := filepath.Join(t.TempDir(), "missing.pem")
	for _, tc := range []struct {
		name, cert, key string
		want            []string
	}{
		{"missing certificate", missing, certs.KeyFile, []string{"certificate", missing}},
		{"missing key", certs.CertFile, missing, []string{"key", missing}},
		{"key of another certificate", certs.CertFile, other.KeyFile, []string{certs.CertFile, other.KeyFile}},
		{"key given as the certificate", certs.KeyFile, certs.KeyFile, []string{certs.KeyFile}},
		{"no key file", certs.CertFile, "", []string{"both"}},
		{"no certificate file", "", certs.KeyFile, []string{"both"}},
		{"neither file", "", "", []string{"both"}}, // unset environment variables, say: not cleartext
	} {
		_, err := web.New(web.WithTLS(tc.cert, tc.key))
		if err == nil {
			t.Errorf("%s: New succeeded; want an error", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: got %q; want it to name %q", tc.name, err, w)
			}
		}
	}
	if _, err := web.New(web.WithTLSConfig(&tls.Config{})); err == nil || !strings.Contains(err.Error(), "no certificate") {
		t.Errorf("WithTLSConfig without a certificate: got %v; want an error saying so", err)
	}
	// A certificate chosen per handshake is one.
	for name, c := range map[string]*tls.Config{
		"GetCertificate":     {GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return nil, nil }},
		"GetConfigForClient": {GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) { return nil, nil }},
	} {
		if _, err := web.New(web.WithTLSConfig(c)); err != nil {
			t.Errorf("WithTLSConfig with %s: %v", name, err)
		}
	}
}

// TestTLSConfigNextProtosDoNotLeaveHTTP2Out: NextProtos of WithTLSConfig's
// own come first, and net/http still adds h2 (and http/1.1) after them, so
// a client offering h2 alone gets it; Protocols is what leaves HTTP/2 out.
func TestTLSConfigNextProtosDoNotLeaveHTTP2Out(t *testing.T) {
	certs := webtest.NewCerts(t)
	pair, err := tls.LoadX509KeyPair(certs.CertFile, certs.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	app := newApp(t, web.WithTLSConfig(&tls.Config{Certificates: []tls.Certificate{pair}, NextProtos: []string{"http/1.1"}}))
	url, _ := serveTLS(t, app)
	c, err := tls.Dial("tcp", strings.TrimPrefix(url, "https://"), &tls.Config{RootCAs: certs.Pool, ServerName: "localhost", NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := c.ConnectionState().NegotiatedProtocol; got != "h2" {
		t.Errorf("a client offering h2 alone negotiated %q; want h2", got)
	}
}

// TestHTTP2ResetIsNotAWriteTimeout: a stream the client resets fails the
// handler's write with the reset, not with os.ErrDeadlineExceeded: the
// stream's write timeout (10 s here) has not passed. (writetimeout.go,
// failed's time since the deadline was armed.)
func TestHTTP2ResetIsNotAWriteTimeout(t *testing.T) {
	certs := webtest.NewCerts(t)
	app := newApp(t, web.WithTLS(certs.CertFile, certs.KeyFile), web.WithWriteTimeout(10*time.Second))
	writeErr := make(chan error, 1)
	app.Get("/big", func(w http.ResponseWriter, r *http.Request) error {
		_, err := w.Write(bytes.Repeat([]byte("x"), 12<<20))
		writeErr <- err
		return nil
	})
	url, _ := serveTLS(t, app)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/big", nil)
	resp, err := certs.Client(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ProtoMajor != 2 {
		t.Fatalf("%s; want HTTP/2", resp.Proto)
	}
	if _, err := io.ReadFull(resp.Body, make([]byte, 1024)); err != nil {
		t.Fatal(err)
	}
	cancel() // the client resets the stream
	resp.Body.Close()
	select {
	case err := <-writeErr:
		if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("handler's write after a reset: %v; want the reset's error, not a write timeout", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the handler's write still blocked 30 s after the client reset the stream")
	}
}
