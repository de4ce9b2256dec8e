package taskmetrics_test

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/task"
	"github.com/loomrt/loom/task/taskmetrics"
	"github.com/loomrt/loom/task/tasktest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := taskmetrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	clock := tasktest.NewClock(time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC))
	exec := loom.Virtual()
	s, err := task.NewScheduler(task.WithClock(clock), task.WithExecutor(exec), task.WithHooks(m.Hooks()))
	if err != nil {
		t.Fatal(err)
	}
	defer exec.Shutdown(context.Background())
	defer s.Shutdown(context.Background())
	n := 0
	err = s.Add("job", task.Every(time.Second), func(context.Context) error {
		n++
		switch n {
		case 1:
			return errors.New("no")
		case 2:
			panic("oops")
		}
		return nil
	}, task.WithMisfire(task.Skip))
	if err != nil {
		t.Fatal(err)
	}
	tasktest.Settle(t, clock, s, 1)
	for range 4 {
		clock.Advance(time.Second)
		tasktest.Settle(t, clock, s, 1)
	}
	clock.Advance(10*time.Second + task.MisfireGrace) // 70 occurrences due: the last runs, 69 missed
	tasktest.Settle(t, clock, s, 1)

	got := gather(t, reg)
	want := map[string]float64{
		`loom_task_runs_total{job="job",outcome="error"}`:    1,
		`loom_task_runs_total{job="job",outcome="panic"}`:    1,
		`loom_task_runs_total{job="job",outcome="success"}`:  3,
		`loom_task_skipped_total{job="job",reason="missed"}`: 69,
		`loom_task_run_duration_seconds_count{job="job"}`:    5,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %v; want %v", k, got[k], v)
		}
	}
	for _, k := range []string{`loom_task_last_run_timestamp_seconds{job="job"}`, `loom_task_last_success_timestamp_seconds{job="job"}`} {
		if got[k] < float64(time.Now().Add(-time.Hour).Unix()) {
			t.Errorf("%s: got %v; want about now", k, got[k])
		}
	}
	if _, err := taskmetrics.New(reg); err == nil {
		t.Error("registering twice: got nil error")
	}
}

// TestTaskDoesNotLinkPrometheus: a program that imports task alone does
// not link Prometheus.
func TestTaskDoesNotLinkPrometheus(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/loomrt/loom/task").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "prometheus") {
		t.Errorf("task depends on Prometheus:\n%s", out)
	}
}

// gather returns every sample in reg as name{labels} → value (counters,
// gauges, and histograms' counts).
func gather(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+`="`+l.GetValue()+`"`)
			}
			key := "{" + strings.Join(labels, ",") + "}"
			switch {
			case m.Counter != nil:
				out[f.GetName()+key] = m.GetCounter().GetValue()
			case m.Gauge != nil:
				out[f.GetName()+key] = m.GetGauge().GetValue()
			case m.Histogram != nil:
				out[f.GetName()+"_count"+key] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}
