package fs

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// fuseLibs are the FUSE libraries: only the adapters may depend on them.
var fuseLibs = []string{"bazil.org/fuse", "github.com/hanwen/go-fuse"}

const module = "github.com/recfs/recfs"

// TestLayering holds the fs side of the one-way layering (from go list
// -deps): the tree (fs) and the node suite (fs/fstest) depend on no FUSE
// library, no adapter and not on the CLI; each adapter depends on fs and
// on neither the other adapter nor the CLI.
func TestLayering(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	deps := func(pkg string) []string {
		t.Helper()
		out, err := exec.Command(goBin, "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		return strings.Fields(string(out))
	}
	forbidden := func(pkg string, bad ...string) {
		t.Helper()
		for _, d := range deps(pkg) {
			for _, b := range bad {
				if d == b || strings.HasPrefix(d, b+"/") {
					t.Errorf("%s depends on %s", pkg, d)
				}
			}
		}
	}
	adapters := []string{module + "/fs/gofuse", module + "/fs/bazil"}
	above := append([]string{module + "/cmd"}, adapters...)
	forbidden(module+"/fs", append(above, fuseLibs...)...)
	forbidden(module+"/fs/fstest", append(above, fuseLibs...)...)
	forbidden(adapters[0], module+"/cmd", adapters[1])
	forbidden(adapters[1], module+"/cmd", adapters[0])
	for _, a := range adapters {
		if !slices.Contains(deps(a), module+"/fs") {
			t.Errorf("%s does not build on fs", a)
		}
	}
}
