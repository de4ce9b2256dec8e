package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/loomrt/loom/internal/harness/runtimestats"
)

// TestSummarisePeaksAndDifferences: peaks are taken over every sample, the
// runtime's only over those it answered, and CPU and GC are differences
// between the first and last (GC: first and last answered) samples.
func TestSummarisePeaksAndDifferences(t *testing.T) {
	samples := []Sample{
		{RSSBytes: 10, Threads: 3, CPUSeconds: 1.0, GCCycles: 100, Goroutines: 99, NotInGo: 99}, // runtime did not answer
		{RSSBytes: 30, Threads: 2, CPUSeconds: 1.25, RuntimeOK: true, Goroutines: 5, NotInGo: 4, GCCycles: 7},
		{RSSBytes: 20, Threads: 6, CPUSeconds: 1.5, RuntimeOK: true, Goroutines: 8, NotInGo: 1, GCCycles: 9},
		{RSSBytes: 5, Threads: 1, CPUSeconds: 2.5, RuntimeOK: true, Goroutines: 2, NotInGo: 0, GCCycles: 12},
	}
	st := summarise(samples, 1)
	want := ServerStats{
		PeakRSSBytes: 30, PeakThreads: 6, PeakGoroutines: 8, PeakNotInGo: 4,
		CPUSeconds: 1.5, GCCycles: 5, RuntimeUnavailable: 1,
	}
	st.Samples = nil
	if !reflect.DeepEqual(st, want) {
		t.Errorf("summarise = %+v; want %+v", st, want)
	}
	if st := summarise(nil, 0); st.CPUSeconds != 0 || st.GCCycles != 0 {
		t.Errorf("summarise(nil) = %+v; want zero", st)
	}
}

// TestSamplerReadsProcessAndRuntime samples this test process with a real
// runtimestats listener: the executor's figures reach the sample, and a
// reading the listener did not give in time is counted as missed.
func TestSamplerReadsProcessAndRuntime(t *testing.T) {
	srv := httptest.NewServer(runtimestats.HandlerWith(func(s *runtimestats.Snapshot) {
		s.ExecutorLimit, s.ExecutorRunning, s.ExecutorQueued = 7, 3, 2
		s.ExecutorRejected, s.ExecutorExpired = 5, 1
	}))
	defer srv.Close()
	s := startSampler(context.Background(), os.Getpid(), strings.TrimPrefix(srv.URL, "http://"), time.Now())
	// A loaded machine may miss a reading's 200 ms; wait for one that came.
	deadline := time.Now().Add(30 * time.Second)
	for {
		s.mu.Lock()
		ok := false
		for _, smp := range s.samples {
			ok = ok || smp.RuntimeOK
		}
		s.mu.Unlock()
		if ok || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	st := s.Stop()
	if len(st.Samples) < 2 {
		t.Fatalf("%d samples; want the loop's and Stop's", len(st.Samples))
	}
	missed := 0
	var got *Sample
	for i, smp := range st.Samples {
		if smp.RSSBytes == 0 || smp.Threads == 0 {
			t.Errorf("sample %d: %+v; want this process's memory and threads", i, smp)
		}
		if !smp.RuntimeOK {
			missed++
			continue
		}
		got = &st.Samples[i]
	}
	if st.RuntimeUnavailable != missed {
		t.Errorf("RuntimeUnavailable %d; %d samples lack the runtime's figures", st.RuntimeUnavailable, missed)
	}
	if got == nil {
		t.Fatal("no sample read the runtimestats listener in 30 s")
	}
	if got.Limit != 7 || got.InFlight != 3 || got.Queued != 2 || got.Rejected != 5 || got.Expired != 1 || got.Goroutines == 0 {
		t.Errorf("sample %+v; want limit 7, 3 in flight, 2 queued, 5 rejected, 1 expired, goroutines", *got)
	}
}

// TestSamplerWithoutRuntimeMissesNothing: a server with no runtimestats
// listener (a peer) has samples from /proc alone, none counted as missed.
func TestSamplerWithoutRuntimeMissesNothing(t *testing.T) {
	s := startSampler(context.Background(), os.Getpid(), "", time.Now())
	st := s.Stop()
	if len(st.Samples) == 0 || st.RuntimeUnavailable != 0 {
		t.Errorf("%d samples, %d missed; want samples and none missed", len(st.Samples), st.RuntimeUnavailable)
	}
	if st.Samples[0].RuntimeOK {
		t.Errorf("sample %+v read a runtime it was not given", st.Samples[0])
	}
}

// TestSamplerStopsWhenTheProcessIsGone: a pid with no process gives no
// sample, and the loop ends by itself.
func TestSamplerStopsWhenTheProcessIsGone(t *testing.T) {
	s := startSampler(context.Background(), 1<<30, "", time.Now())
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		t.Fatal("sampler of a missing process still running after 30 s")
	}
	if st := s.Stop(); len(st.Samples) != 0 {
		t.Errorf("%d samples of a missing process", len(st.Samples))
	}
}

// TestSamplerCountsMissedReadings: every reading of a metrics listener
// that answers with an error is counted as missed.
func TestSamplerCountsMissedReadings(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	s := startSampler(context.Background(), os.Getpid(), strings.TrimPrefix(srv.URL, "http://"), time.Now())
	st := s.Stop()
	if len(st.Samples) == 0 || st.RuntimeUnavailable != len(st.Samples) {
		t.Errorf("%d samples, %d missed; want every one missed", len(st.Samples), st.RuntimeUnavailable)
	}
}
