package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/codectest/recfile"
	"github.com/recfs/recfs/test/internal/syncbuf"
)

// catFollow is a running `recfs cat --follow` process.
type catFollow struct {
	cmd            *exec.Cmd
	stdout, stderr *syncbuf.Buffer
	done           chan struct{}
}

// startCatFollow starts `recfs cat --follow` with args; the process is
// killed when the test ends if it still runs.
func startCatFollow(t *testing.T, args ...string) *catFollow {
	t.Helper()
	needBinary(t)
	c := &catFollow{cmd: exec.Command(bin, append([]string{"cat", "--follow", "--follow-interval", "20ms", "--no-cache"}, args...)...),
		stdout: &syncbuf.Buffer{}, stderr: &syncbuf.Buffer{}, done: make(chan struct{})}
	c.cmd.Stdout, c.cmd.Stderr = c.stdout, c.stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.cmd.Wait(); close(c.done) }()
	t.Cleanup(func() {
		_ = c.cmd.Process.Kill()
		<-c.done
	})
	return c
}

// waitOut waits until the process has written want to standard output.
func (c *catFollow) waitOut(t *testing.T, want string) {
	t.Helper()
	waitUntil(t, func() (bool, string) {
		return c.stdout.String() == want, "stdout " + quote(c.stdout.String()) + ", want " + quote(want) + "; stderr " + quote(c.stderr.String())
	})
}

// interrupt sends SIGINT and checks that the process ends at once with
// exit status 0.
func (c *catFollow) interrupt(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.done:
	case <-time.After(exitTimeout):
		t.Fatalf("cat --follow still runs %v after SIGINT", exitTimeout)
	}
	if code := c.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit status %d after SIGINT, want 0; stderr %q", code, c.stderr.String())
	}
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, "\n", `\n`) + `"` }

// TestCatFollow: `recfs cat --follow` writes the records of a log, then
// each record appended to it by another process; a log replaced by another
// file is written again from its record 0 after one line on stderr (the
// rule of a --follow mount); SIGINT ends it at once with exit status 0.
// --json and last:K work as without --follow.
func TestCatFollow(t *testing.T) {
	t.Parallel()
	text := [][]byte{[]byte("first"), []byte("second"), []byte("third"), []byte("fourth"), []byte("new-a"), []byte("new-b")}
	put := codectest.PutBatch
	batches := [][]byte{put(1, "k1", "v1"), put(2, "k2", "v2"), put(3, "k3", "v3"), put(4, "k4", "v4"), put(1, "a", "x"), put(2, "b", "y")}
	cases := []struct {
		name   string
		recs   [][]byte // three first records, the appended one, the replacement's two
		args   []string
		first  string // output for the three first records
		fourth string // then for "fourth"
		again  string // then for the replacement's records "new-a", "new-b"
	}{
		{"number", text, []string{"--number"}, "000000\tfirst\n000001\tsecond\n000002\tthird\n", "000003\tfourth\n", "000000\tnew-a\n000001\tnew-b\n"},
		{"json-last", text, []string{"--json", "--data", "text", "SRC", "last:1"}, `{"n":2,"offset":25,"length":5,"data":"third","encoding":"text"}` + "\n",
			`{"n":3,"offset":37,"length":6,"data":"fourth","encoding":"text"}` + "\n",
			`{"n":0,"offset":0,"length":5,"data":"new-a","encoding":"text"}` + "\n" + `{"n":1,"offset":12,"length":5,"data":"new-b","encoding":"text"}` + "\n"},
		{"decode", batches, []string{"--decode", "batch"}, "batch seq 1 count 1\nput k1 v1\nbatch seq 2 count 1\nput k2 v2\nbatch seq 3 count 1\nput k3 v3\n",
			"batch seq 4 count 1\nput k4 v4\n", "batch seq 1 count 1\nput a x\nbatch seq 2 count 1\nput b y\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			src := filepath.Join(dir, "live.log")
			recfile.WriteLog(t, src, tc.recs[:3])
			args := append([]string(nil), tc.args...)
			if i := indexOf(args, "SRC"); i >= 0 {
				args[i] = src
			} else {
				args = append(args, src)
			}
			c := startCatFollow(t, args...)
			c.waitOut(t, tc.first)

			in := filepath.Join(dir, "in")
			if err := os.WriteFile(in, tc.recs[3], 0o644); err != nil {
				t.Fatal(err)
			}
			if r := runRecfs(t, "append", src, in); r.code != 0 {
				t.Fatalf("recfs append: %d %s", r.code, r.stderr)
			}
			c.waitOut(t, tc.first+tc.fourth)

			next := filepath.Join(dir, "next.log")
			recfile.WriteLog(t, next, tc.recs[4:])
			if err := os.Rename(next, src); err != nil {
				t.Fatal(err)
			}
			c.waitOut(t, tc.first+tc.fourth+tc.again)
			// stderr comes through its own pipe: it may arrive after stdout.
			want := "recfs: " + src + " was rewritten or replaced; following it from record 0\n"
			waitUntil(t, func() (bool, string) {
				return c.stderr.String() == want, "stderr " + quote(c.stderr.String()) + ", want " + quote(want)
			})

			c.interrupt(t)
		})
	}
}

// TestCatFollowUsage: --follow takes only selections that have no end.
func TestCatFollowUsage(t *testing.T) {
	t.Parallel()
	src := tempLog(t, "f.log", [][]byte{[]byte("a")})
	for _, args := range [][]string{{src, "0-1"}, {src, "3"}, {"--trailer", src}} {
		r := runRecfs(t, append([]string{"cat", "--follow"}, args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, "--follow") {
			t.Errorf("cat --follow %q: exit %d, stderr %q; want 2 and a word on --follow", args, r.code, r.stderr)
		}
	}
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}
