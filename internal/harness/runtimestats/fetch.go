package runtimestats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// ErrStatus is returned by Fetch when the server answers with a status
// other than 200.
var ErrStatus = errors.New("runtimestats: unexpected status")

// maxBody bounds how much of a response Fetch reads: a Snapshot's JSON is a
// few hundred bytes, so anything much larger is not one.
const maxBody = 64 << 10

// oneShot opens a fresh connection per request and keeps none idle, so that
// Fetch leaves no goroutine behind once it returns. Connecting again every
// 100 ms on loopback is cheap.
var oneShot = &http.Client{
	Transport: &http.Transport{DisableKeepAlives: true},
	Timeout:   5 * time.Second,
}

// Fetch GETs url, which should be served by Handler, and decodes the
// Snapshot. It keeps no connection open after it returns. It is safe for
// concurrent use; it gives up when ctx ends or after 5 s.
func Fetch(ctx context.Context, url string) (Snapshot, error) {
	return FetchWith(ctx, oneShot, url)
}

// FetchWith is Fetch with the caller's client, for a sampler that wants to
// keep one connection alive across polls (and closes its idle connections
// when done).
func FetchWith(ctx context.Context, client *http.Client, url string) (Snapshot, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return Snapshot{}, fmt.Errorf("runtimestats: fetch: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return Snapshot{}, fmt.Errorf("runtimestats: fetch: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
		return Snapshot{}, fmt.Errorf("%w: %s from %s", ErrStatus, resp.Status, url)
	}
	var snap Snapshot
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxBody)).Decode(&snap); err != nil {
		return Snapshot{}, fmt.Errorf("runtimestats: decode %s: %w", url, err)
	}
	return snap, nil
}
