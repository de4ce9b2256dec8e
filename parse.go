package loom

// Parse builds an executor from a spec string: ParseSpec followed by
// Spec.New. See ParseSpec for the syntax ("pool:64,queue=1000,name=http") and
// Spec.New for what opts may set. Parse returns the first error of either,
// which wraps ErrBadSpec and names the bad part:
// parse executor spec "pool:x": workers: "x" is not a number: invalid syntax.
// A threads or pool spec starts its workers before Parse returns; use
// ParseSpec to check a spec without starting anything.
func Parse(spec string, opts ...Option) (Executor, error) {
	s, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	return s.New(opts...)
}
