// Package load is an HTTP/1.1 load generator: closed loop (a fixed number of
// connections, each sending its next request when the previous response
// arrives, like ab, wrk and hey) and open loop (a fixed request rate on a
// schedule that ignores responses, like wrk2 and vegeta, with latency measured
// from the moment each request should have been sent).
//
// It speaks HTTP/1.1 over plain net.Conn with pre-built request bytes and a
// minimal response parser, so that the generator spends little CPU on the
// machine it shares with the server under test. Latencies go into HDR
// histograms; a Result can be written as wrk-like text or JSON and merged with
// results from other machines.
//
// Example:
//
//	res, err := load.Run(ctx, load.Config{
//		Targets:     []load.Target{{URL: "http://127.0.0.1:8080/"}},
//		Connections: 64,
//		Duration:    10 * time.Second,
//	})
//	if err != nil {
//		return err
//	}
//	res.WriteText(os.Stdout)
package load
