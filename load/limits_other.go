//go:build !unix

package load

func fileLimit() (uint64, bool) { return 0, false }
