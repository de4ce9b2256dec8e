package bench

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/loomrt/loom/internal/harness/procstat"
	"github.com/loomrt/loom/internal/harness/runtimestats"
)

// sampleEvery is how often a server under test is read.
const sampleEvery = 100 * time.Millisecond

// sampler reads a server process every sampleEvery: /proc for memory,
// threads and CPU, its runtimestats listener for goroutines and GC. Stop
// ends it and returns what it saw.
type sampler struct {
	pid        int
	metricsURL string
	start      time.Time
	client     *http.Client
	transport  *http.Transport

	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	samples []Sample
	missed  int
}

func startSampler(ctx context.Context, pid int, metricsAddr string, start time.Time) *sampler {
	ctx, cancel := context.WithCancel(ctx)
	transport := &http.Transport{MaxIdleConnsPerHost: 1}
	s := &sampler{
		pid:       pid,
		start:     start,
		transport: transport,
		client:    &http.Client{Transport: transport},
		cancel:    cancel,
		done:      make(chan struct{}),
	}
	if metricsAddr != "" {
		s.metricsURL = "http://" + metricsAddr + "/"
	}
	go s.loop(ctx)
	return s
}

func (s *sampler) loop(ctx context.Context) {
	defer close(s.done)
	ticker := time.NewTicker(sampleEvery)
	defer ticker.Stop()
	for {
		if !s.sampleOnce(ctx) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// sampleOnce takes one sample; it returns false once the process is gone.
func (s *sampler) sampleOnce(ctx context.Context) bool {
	st, err := procstat.Read(s.pid)
	if err != nil {
		return false
	}
	sample := Sample{At: time.Since(s.start), RSSBytes: st.RSSBytes, Threads: st.Threads, CPUSeconds: st.CPUSeconds}
	if st.State == 'Z' {
		return false
	}
	if s.metricsURL != "" {
		// A server drowning in requests may answer late; a missing reading
		// is recorded as such rather than delaying the next one.
		fetchCtx, cancel := context.WithTimeout(ctx, 2*sampleEvery)
		snap, err := runtimestats.FetchWith(fetchCtx, s.client, s.metricsURL)
		cancel()
		if err == nil {
			sample.RuntimeOK = true
			sample.Goroutines = snap.Goroutines
			sample.NotInGo = snap.GoroutinesNotInGo
			sample.GCCycles = snap.GCCycles
			sample.HeapBytes = snap.HeapObjectsBytes
			sample.Limit = int(snap.ExecutorLimit)
			sample.InFlight, sample.Queued = int(snap.ExecutorRunning), int(snap.ExecutorQueued)
			sample.Rejected, sample.Expired = snap.ExecutorRejected, snap.ExecutorExpired
		}
	}
	s.mu.Lock()
	s.samples = append(s.samples, sample)
	if !sample.RuntimeOK && s.metricsURL != "" {
		s.missed++
	}
	s.mu.Unlock()
	return true
}

// Stop takes a last sample if the process is still there, ends the loop and
// summarises the samples.
func (s *sampler) Stop() ServerStats {
	s.cancel()
	<-s.done
	s.sampleOnce(context.Background())
	s.transport.CloseIdleConnections()
	s.mu.Lock()
	defer s.mu.Unlock()
	return summarise(s.samples, s.missed)
}

// summarise computes peaks and the CPU and GC used between the first and
// last samples.
func summarise(samples []Sample, missed int) ServerStats {
	st := ServerStats{Samples: samples, RuntimeUnavailable: missed}
	var firstGC, lastGC uint64
	seenGC := false
	for _, s := range samples {
		st.PeakRSSBytes = max(st.PeakRSSBytes, s.RSSBytes)
		st.PeakThreads = max(st.PeakThreads, s.Threads)
		if s.RuntimeOK {
			st.PeakGoroutines = max(st.PeakGoroutines, s.Goroutines)
			st.PeakNotInGo = max(st.PeakNotInGo, s.NotInGo)
			if !seenGC {
				firstGC, seenGC = s.GCCycles, true
			}
			lastGC = s.GCCycles
		}
	}
	if len(samples) > 1 {
		st.CPUSeconds = samples[len(samples)-1].CPUSeconds - samples[0].CPUSeconds
	}
	st.GCCycles = lastGC - firstGC
	return st
}
