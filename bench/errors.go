package bench

import "errors"

var (
	// ErrUnknownScenario is returned for a scenario name the catalogue
	// does not hold.
	ErrUnknownScenario = errors.New("unknown scenario")
	// ErrNoRuns is returned by Run when the selection leaves nothing to run.
	ErrNoRuns = errors.New("nothing to run")
	// ErrBadModel is returned by Run for a model in Options.Models that is
	// neither an executor spec loom.Parse reads nor "peer:<framework>".
	ErrBadModel = errors.New("bad model")
	// ErrServerStart is wrapped by the error of a server that did not start
	// or did not say where it listens.
	ErrServerStart = errors.New("server under test did not start")
)
