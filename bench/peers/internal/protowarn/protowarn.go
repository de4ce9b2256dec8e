// Package protowarn lets one binary link both protoactor-go and hollywood.
// Both register protobuf files of the same name, and the protobuf runtime
// panics at the second registration unless GOLANG_PROTOBUF_REGISTRATION_CONFLICT
// says otherwise; it reads the variable at the conflict, not before.
//
// Import it for its side effect, blank, from the package that links both.
// Since Go 1.21 the language fixes the order of package initialisation: the
// uninitialised package first by import path whose imports are all
// initialised. This package imports only os, and the registering packages
// import google.golang.org/protobuf, whose paths sort after this one: so its
// init runs before either registers, whatever else the binary imports.
package protowarn

import "os"

// Variable is the protobuf runtime's switch for registration conflicts.
const Variable = "GOLANG_PROTOBUF_REGISTRATION_CONFLICT"

func init() {
	if os.Getenv(Variable) == "" {
		os.Setenv(Variable, "warn")
	}
}
