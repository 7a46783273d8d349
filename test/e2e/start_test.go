package e2e

import (
	"bufio"
	"bytes"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// Limits on the work one of our packages may do when the binary starts:
// every command pays it, so tables, templates and regexps are built on
// first use instead. A parsed template or one compiled regexp is well past
// them.
const (
	initAllocLimit = 24
	initByteLimit  = 4096
)

// initCost is what GODEBUG=inittrace=1 reports for one package's init.
type initCost struct {
	pkg           string
	bytes, allocs int
}

// parseInittrace reads the "init PKG @T ms, C ms clock, B bytes, A allocs"
// lines of a Go binary's standard error.
func parseInittrace(t *testing.T, stderr []byte) []initCost {
	t.Helper()
	var costs []initCost
	sc := bufio.NewScanner(bytes.NewReader(stderr))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 11 || f[0] != "init" || f[8] != "bytes," || f[10] != "allocs" {
			continue
		}
		b, berr := strconv.Atoi(f[7])
		a, aerr := strconv.Atoi(f[9])
		if berr != nil || aerr != nil {
			t.Fatalf("unreadable inittrace line %q", sc.Text())
		}
		costs = append(costs, initCost{pkg: f[1], bytes: b, allocs: a})
	}
	return costs
}

// TestStartBuildsNothingOfOurs runs `recfs --help` with the runtime's init
// trace and checks that none of our packages allocates more than a few
// objects before main runs (third-party inits are not ours to change).
func TestStartBuildsNothingOfOurs(t *testing.T) {
	t.Parallel()
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	c := exec.Command(bin, "--help")
	c.Env = append(c.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	c.Stderr = &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("recfs --help: %v\n%s", err, stderr.Bytes())
	}
	ours := 0
	for _, c := range parseInittrace(t, stderr.Bytes()) {
		if c.pkg != "main" && !strings.HasPrefix(c.pkg, "github.com/recfs/recfs/") {
			continue
		}
		ours++
		if c.allocs > initAllocLimit || c.bytes > initByteLimit {
			t.Errorf("init of %s: %d allocations, %d bytes (limit %d, %d): build it on first use",
				c.pkg, c.allocs, c.bytes, initAllocLimit, initByteLimit)
		}
	}
	// Enough of ours to show the trace was read: main and the codecs.
	if ours < 8 {
		t.Fatalf("init trace names %d of our packages, want at least 8:\n%s", ours, stderr.Bytes())
	}
}
