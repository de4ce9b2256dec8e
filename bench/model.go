package bench

import (
	"fmt"
	"strings"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/web"
)

// A model names what a run's server runs on. It is an executor spec for
// loom.Parse, optionally after a connection engine and a slash:
// "nbio/pool:16" serves on web/nbio's event loop with a pool of 16;
// "virtual" and "std/virtual" both serve on net/http. "std+tls/virtual"
// serves on net/http over TLS (HTTP/1.1, a certificate made for the run),
// which the load generator then drives as https://. "peer:<framework>"
// names a peer framework instead, which has neither.

// tlsSuffix, after a model's engine, serves it over TLS.
const tlsSuffix = "+tls"

// splitModel returns a model's engine, without tlsSuffix, and executor
// spec: "std" when it names no engine. A peer has neither.
func splitModel(model string) (engine, spec string) {
	if IsPeer(model) {
		return "", ""
	}
	engine, spec, found := strings.Cut(model, "/")
	if !found {
		return "std", model
	}
	return strings.TrimSuffix(engine, tlsSuffix), spec
}

// modelTLS reports whether model is served over TLS.
func modelTLS(model string) bool {
	engine, _, found := strings.Cut(model, "/")
	return found && !IsPeer(model) && strings.HasSuffix(engine, tlsSuffix)
}

// checkModel returns an error naming what is wrong with model: an engine
// web does not know (or, being a library, does not link), or a bad spec.
func checkModel(model string) error {
	if IsPeer(model) {
		return nil
	}
	engine, spec := splitModel(model)
	if engine == "" {
		return fmt.Errorf("model %q: no engine before the slash (want std or nbio)", model)
	}
	if _, err := web.LookupEngine(engine); err != nil {
		return fmt.Errorf("model %q: %w", model, err)
	}
	if modelTLS(model) && engine != "std" {
		return fmt.Errorf("model %q: only std serves TLS (want std+tls/…)", model)
	}
	if _, err := loom.ParseSpec(spec); err != nil {
		return fmt.Errorf("model %q: %w", model, err)
	}
	return nil
}

// sameModel is the name two reports pair a model by: "std/virtual" and
// "virtual" are one model.
func sameModel(model string) string {
	return strings.TrimPrefix(model, "std/")
}
