package taskmetrics_test

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loomrt/loom/task"
	"github.com/loomrt/loom/task/taskmetrics"
)

func ExampleNew() {
	reg := prometheus.NewRegistry() // web/metrics' Metrics.Registry in a web app
	m, err := taskmetrics.New(reg)
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := task.NewScheduler(task.WithHooks(m.Hooks()))
	if err != nil {
		fmt.Println(err)
		return
	}
	done := make(chan struct{})
	s.Add("once", task.At(time.Now()), func(context.Context) error {
		defer close(done)
		return nil
	})
	<-done
	s.Shutdown(context.Background())

	families, _ := reg.Gather()
	for _, f := range families {
		if f.GetName() == "loom_task_runs_total" {
			fmt.Println(f.GetName(), f.GetMetric()[0].GetCounter().GetValue())
		}
	}
	// Output: loom_task_runs_total 1
}
