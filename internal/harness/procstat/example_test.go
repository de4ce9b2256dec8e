package procstat_test

import (
	"fmt"
	"os"

	"github.com/loomrt/loom/internal/harness/procstat"
)

// Read a process's figures, here this test's own.
func ExampleRead() {
	st, err := procstat.Read(os.Getpid())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("has threads:", st.Threads > 0)
	// Output:
	// has threads: true
}
