package e2e

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/recfs/recfs/codec/codectest/recfile"
	"github.com/recfs/recfs/codec/leveldb"
	"github.com/recfs/recfs/codec/recordio"
	"github.com/recfs/recfs/codec/tfrecord"
	"github.com/recfs/recfs/test/internal/syncbuf"
	"github.com/recfs/recfs/test/internal/vgw"
)

// Progress tests run recfs on a pseudo-terminal (script(1)) over a paced
// source: the test lets half of the source's bytes be read, then holds
// the rest, so the build is under way for as long as the test needs to
// see the bar, on any machine. Then it lets the rest through and checks
// the command's normal end.

// smallRecords returns n records of 8 to 40 bytes (many records per byte:
// the builds report progress every few thousand records).
func smallRecords(n int) [][]byte {
	rng := rand.New(rand.NewSource(int64(n)))
	out := make([][]byte, n)
	for i := range out {
		out[i] = fmt.Appendf(nil, "%d:%s", i, bytes.Repeat([]byte{byte('a' + i%26)}, 8+rng.Intn(32)))
	}
	return out
}

// progressLog returns a leveldb log of about 3 MiB of small records.
func progressLog(t *testing.T) []byte {
	b, _ := recfile.LogBytes(t, smallRecords(100_000), leveldb.WriterOptions{})
	return b
}

// progressRIO returns a grailbio recordio file of about 3 MiB in blocks
// of 1,001 small items.
func progressRIO(t *testing.T) []byte {
	return recfile.RIOBytes(t, smallRecords(100_000), recordio.WriterOptions{MaxItems: 1000}, nil)
}

// progressTFR returns a TFRecord file of about 4 MiB of small records.
func progressTFR(*testing.T) []byte {
	var b []byte
	for _, r := range smallRecords(100_000) {
		b = tfrecord.AppendRecord(b, r)
	}
	return b
}

// termRun is a command running on a pseudo-terminal.
type termRun struct {
	out  *syncbuf.Buffer // what the terminal showed
	done chan struct{}
	err  error // valid after done
}

// onTerminal runs the shell command line under script(1), whose
// pseudo-terminal is the command's standard output and error.
func onTerminal(t *testing.T, line string) *termRun {
	t.Helper()
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("no script(1)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), procTimeout)
	r := &termRun{out: &syncbuf.Buffer{}, done: make(chan struct{})}
	c := exec.CommandContext(ctx, "script", "-qfec", line, "/dev/null")
	c.Stdout, c.Stderr = r.out, r.out
	c.WaitDelay = 5 * time.Second
	if err := c.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() {
		r.err = c.Wait()
		cancel()
		close(r.done)
	}()
	t.Cleanup(func() {
		select {
		case <-r.done:
		case <-time.After(exitTimeout):
			_ = c.Process.Kill()
			<-r.done
		}
	})
	return r
}

// wait waits (with a bound) for the command to end and returns its exit
// status.
func (r *termRun) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(mountTimeout):
		t.Fatalf("still running after %v; the terminal shows:\n%q", mountTimeout, r.out)
	}
	if ee, ok := r.err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	return 0
}

// progressFrame is one drawn line of a progress bar with a total.
type progressFrame struct {
	line string
	pct  int
	left int // seconds, as shown (rounded up); -1 for ">99h"
}

// frameRE matches a bar line: label, bar, share, bytes, rate, time left.
var frameRE = regexp.MustCompile(`^(indexing|reading) \S+ \[[= ]+\] +(\d+)% \d+(\.\d)? (B|KiB|MiB|GiB)/(\d+\.\d (KiB|MiB|GiB)) \d+(\.\d)? (B|KiB|MiB|GiB)/s ((\d+)h(\d\d)m|(\d+)m(\d\d)s|(\d+)s|>99h) left$`)

// frames returns the bar lines with a time left that out shows (each
// drawn as "\r" line "\x1b[K").
func frames(out string) []progressFrame {
	var fs []progressFrame
	for _, part := range strings.Split(out, "\r") {
		line, ok := strings.CutSuffix(part, "\x1b[K")
		m := frameRE.FindStringSubmatch(line)
		if !ok || m == nil {
			continue
		}
		f := progressFrame{line: line, left: -1}
		f.pct, _ = strconv.Atoi(m[2])
		n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
		switch {
		case m[10] != "":
			f.left = n(10)*3600 + n(11)*60
		case m[12] != "":
			f.left = n(12)*60 + n(13)
		case m[14] != "":
			f.left = n(14)
		}
		fs = append(fs, f)
	}
	return fs
}

// waitFrame waits (with a bound) until the terminal shows a bar line that
// ok accepts, and returns it.
func waitFrame(t *testing.T, r *termRun, what string, ok func(progressFrame) bool) progressFrame {
	t.Helper()
	deadline := time.Now().Add(mountTimeout)
	for {
		fs := frames(r.out.String())
		for i := len(fs) - 1; i >= 0; i-- {
			if ok(fs[i]) {
				return fs[i]
			}
		}
		select {
		case <-r.done:
			t.Fatalf("the command ended before the terminal showed %s:\n%q", what, r.out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the terminal did not show %s in %v:\n%q", what, mountTimeout, r.out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkPacedProgress runs line on a terminal while p holds the reads of
// its source after the first half: the bar shows the share read so far
// (no more than what went through), the total, a rate and the time left;
// while the build stalls the time left grows (the bar is redrawn without
// news). Then p lets the rest through; the command must exit 0 and its
// output must contain want after the bar's line was erased.
func checkPacedProgress(t *testing.T, p *pacer, line, want string) {
	t.Helper()
	r := onTerminal(t, line)
	// On failure, the command gets the rest of its source before the
	// test waits for it to end (and then unmounts what it mounted).
	t.Cleanup(p.open)
	p.stepUntil(t, p.size/2)
	maxPct := int(p.released.Load() * 100 / p.size)
	total := fmt.Sprintf("/%.1f MiB ", float64(p.size)/(1<<20))
	first := waitFrame(t, r, "a bar with the time left", func(f progressFrame) bool { return true })
	if first.pct < 1 || first.pct > maxPct || !strings.Contains(first.line, total) {
		t.Errorf("bar %q: want 1-%d%% of %s (%d of %d bytes let through)", first.line, maxPct, total, p.released.Load(), p.size)
	}
	if first.left >= 0 {
		waitFrame(t, r, "the time left growing while the build stalls", func(f progressFrame) bool { return f.left < 0 || f.left > first.left })
	}
	p.open()
	if code := r.wait(t); code != 0 {
		t.Fatalf("exit %d; the terminal shows:\n%q", code, r.out)
	}
	out := r.out.String()
	if i := strings.LastIndex(out, "\r\x1b[K"); i < 0 || !strings.Contains(out[i:], want) {
		t.Errorf("no erased bar followed by %q; the terminal shows:\n%q", want, out)
	}
}

// TestProgress: index builds on a terminal show a bar with the rate and
// the time left, for each format, for info, cat (the sequential build)
// and an s3:// source.
func TestProgress(t *testing.T) {
	needFUSE(t)
	for _, tc := range []struct {
		name, file string
		data       func(*testing.T) []byte
		cmd, want  string // cmd's %s is the source
	}{
		{"leveldb", "ev.log", progressLog, "info --no-cache %s", "records:  100000"},
		{"recordio", "ev.rio", progressRIO, "info --no-cache %s", "records:  100000"},
		{"tfrecord", "ev.tfrecord", progressTFR, "info --no-cache %s", "records:  100000"},
		{"cat", "ev.log", progressLog, "cat --no-cache %s >/dev/null && echo cat done", "cat done"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := servePaced(t, tc.file, tc.data(t))
			checkPacedProgress(t, p.pacer, bin+" "+fmt.Sprintf(tc.cmd, p.path), tc.want)
		})
	}
	t.Run("s3", func(t *testing.T) {
		t.Parallel()
		p, env := pacedS3(t, "ev.log", progressLog(t))
		checkPacedProgress(t, p, fmt.Sprintf("%s %s info --no-cache %s", env, bin, vgw.URL("ev.log")), "records:  100000")
	})
}

// pacedS3 starts an S3 server holding data as key, behind a pacing proxy:
// the ranged GETs of key wait for the test. It returns the pacer and an
// env(1) prefix for a command line that points recfs at the proxy.
func pacedS3(t *testing.T, key string, data []byte) (*pacer, string) {
	t.Helper()
	srv := vgw.Start(t)
	srv.Put(t, key, data)
	size := int64(len(data))
	p := newPacer(key, size)
	rec := srv.Recorder(t)
	t.Cleanup(p.open) // before the proxy's Close, which waits for held requests
	rec.Hold(func(r *http.Request) bool {
		var lo, hi int64
		if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/"+key) {
			return true
		}
		if _, err := fmt.Sscanf(r.Header.Get("Range"), "bytes=%d-%d", &lo, &hi); err != nil {
			lo, hi = 0, size-1
		}
		return p.wait(r.Context(), pacedRead{lo, min(hi+1, size) - lo})
	})
	return p, "env " + strings.Join(append(srv.Env(), "AWS_ENDPOINT_URL="+rec.Endpoint), " ")
}
