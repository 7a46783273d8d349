package e2e

// Concurrent and killed `recfs append` processes on one file: every append
// that exits 0 has its record in the file exactly once (read back with the
// reference readers), and nothing that reported failure is there.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// appendKind is a file kind the append tests run on.
type appendKind struct {
	name   string
	create []string // `recfs append` flags that create the file
}

var appendKinds = []appendKind{
	{"leveldb", []string{"--create", "leveldb"}},
	{"recordio-trailer", []string{"--create", "recordio", "--trailer"}},
}

// appendOutcome is what one `recfs append` process did.
type appendOutcome struct {
	key    string // the record's key (its bytes up to '|')
	code   int    // exit status; -1 when killed
	stderr string
}

// appendRecord is record i of worker w: a key, '|', and padding whose
// length makes some records span several leveldb blocks and recordio
// chunks.
func appendRecord(rng *rand.Rand, w, i int, big int) []byte {
	n := rng.Intn(300)
	if rng.Intn(8) == 0 {
		n = rng.Intn(big)
	}
	b := fmt.Appendf(nil, "w%d:%d|", w, i)
	for len(b) < n {
		b = append(b, byte('a'+len(b)%26))
	}
	return b
}

// recfsAppend runs `recfs append path -` with rec on standard input. start,
// if not nil, is given the started process (for killing it).
func recfsAppend(ctx context.Context, path string, rec []byte, start func(*os.Process)) (int, string) {
	c := exec.CommandContext(ctx, bin, "append", path, "-")
	c.Stdin = bytes.NewReader(rec)
	var errb bytes.Buffer
	c.Stderr = &errb
	c.WaitDelay = 5 * time.Second
	if err := c.Start(); err != nil {
		return 127, err.Error()
	}
	if start != nil {
		start(c.Process)
	}
	err := c.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, ""
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -1, errb.String()
		}
		return ee.ExitCode(), errb.String()
	default:
		return 126, err.Error() + " " + errb.String()
	}
}

// createForAppends makes the file with one record, "seed|".
func createForAppends(t *testing.T, path string, k appendKind) {
	t.Helper()
	args := append(append([]string{"append"}, k.create...), path, "-")
	c := exec.Command(bin, args...)
	c.Stdin = strings.NewReader("seed|")
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("recfs %v: %v\n%s", args, err, out)
	}
}

// presentKeys reads the file with the reference readers and counts each
// record key.
func presentKeys(t *testing.T, path string, k appendKind) map[string]int {
	t.Helper()
	var recs [][]byte
	if k.name == "leveldb" {
		recs = refLevelDB(t, path, false)
	} else {
		items, trailer := refGrail(t, path)
		if trailer == nil {
			t.Fatalf("%s: the trailer is gone", path)
		}
		recs = items
	}
	out := map[string]int{}
	for _, r := range recs {
		key, _, ok := bytes.Cut(r, []byte("|"))
		if !ok {
			t.Fatalf("record without a key: %.40q", r)
		}
		out[string(key)]++
	}
	return out
}

// checkOutcomes asserts: every acknowledged record present exactly once,
// no record that reported failure present, no unexpected record, and (when
// strict) no failure at all. Killed appends may or may not be present, once.
func checkOutcomes(t *testing.T, outcomes []appendOutcome, present map[string]int, extra []string, strict bool) {
	t.Helper()
	var acked, killed, failed int
	var problems []string
	known := map[string]bool{}
	for _, k := range extra {
		known[k] = true
		if present[k] != 1 {
			problems = append(problems, fmt.Sprintf("%s present %d times, want once", k, present[k]))
		}
	}
	failures := map[string]int{}
	for _, o := range outcomes {
		known[o.key] = true
		switch {
		case o.code == 0:
			acked++
			if present[o.key] != 1 {
				problems = append(problems, fmt.Sprintf("acknowledged %s present %d times", o.key, present[o.key]))
			}
		case o.code == -1:
			killed++
			if present[o.key] > 1 {
				problems = append(problems, fmt.Sprintf("killed %s present %d times", o.key, present[o.key]))
			}
		default:
			failed++
			msg := strings.TrimSpace(o.stderr)
			failures[msg]++
			if present[o.key] != 0 {
				problems = append(problems, fmt.Sprintf("%s reported failure (exit %d: %s) but is in the file", o.key, o.code, msg))
			}
		}
	}
	for k := range present {
		if !known[k] {
			problems = append(problems, fmt.Sprintf("record %s was never appended", k))
		}
	}
	t.Logf("%d appends: %d acknowledged, %d killed, %d failed; %d distinct records in the file", len(outcomes), acked, killed, failed, len(present))
	if strict && failed > 0 {
		var msgs []string
		for m, n := range failures {
			msgs = append(msgs, fmt.Sprintf("%d× %s", n, m))
		}
		sort.Strings(msgs)
		t.Errorf("%d appends failed: %.2000s", failed, strings.Join(msgs, "; "))
	}
	if acked == 0 {
		t.Error("no append was acknowledged")
	}
	if len(problems) > 0 {
		t.Errorf("%d problems, first ones:\n%s", len(problems), strings.Join(problems[:min(len(problems), 10)], "\n"))
	}
}

// TestConcurrentAppendsTellTheTruth: four `recfs append` loops on one file
// for a few seconds (a minute under RECFS_SOAK=1). Appends serialise on the
// file's lock: all succeed, and each record is in the file exactly once.
func TestConcurrentAppendsTellTheTruth(t *testing.T) {
	needBinary(t)
	const workers = 4
	dur := soakDuration(3*time.Second, 60*time.Second)
	for _, k := range appendKinds {
		t.Run(k.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f")
			createForAppends(t, path, k)
			deadline := time.Now().Add(dur)
			var mu sync.Mutex
			var outcomes []appendOutcome
			var wg sync.WaitGroup
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewSource(int64(w)))
					for i := 0; time.Now().Before(deadline); i++ {
						rec := appendRecord(rng, w, i, 100000)
						code, stderr := recfsAppend(context.Background(), path, rec, nil)
						mu.Lock()
						outcomes = append(outcomes, appendOutcome{fmt.Sprintf("w%d:%d", w, i), code, stderr})
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			checkOutcomes(t, outcomes, presentKeys(t, path, k), []string{"seed"}, true)
			if out, err := exec.Command(bin, "verify", path).CombinedOutput(); err != nil {
				t.Errorf("recfs verify: %v\n%s", err, out)
			}
		})
	}
}

// TestKilledAppendsLoseNothingAcknowledged: `recfs append` loops on a
// recordio file with a trailer while appenders are SIGKILLed at random
// moments (5 kills, 30 under RECFS_SOAK=1). Every append that exited 0 is in
// the file once (after one more append, which repairs what the last kill
// left), killed ones at most once, and appends that were not killed never
// fail.
func TestKilledAppendsLoseNothingAcknowledged(t *testing.T) {
	needBinary(t)
	kills := 5
	if soak() {
		kills = 30
	}
	k := appendKinds[1]
	path := filepath.Join(t.TempDir(), "f.rio")
	createForAppends(t, path, k)
	const workers = 3
	var (
		mu       sync.Mutex
		outcomes []appendOutcome
		running  = map[*os.Process]bool{}
		stop     = make(chan struct{})
		wg       sync.WaitGroup
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(100 + w)))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				rec := appendRecord(rng, w, i, 3<<20) // big ones take long enough to be killed mid-write
				var p *os.Process
				code, stderr := recfsAppend(context.Background(), path, rec, func(pr *os.Process) {
					mu.Lock()
					p = pr
					running[pr] = true
					mu.Unlock()
				})
				mu.Lock()
				delete(running, p)
				outcomes = append(outcomes, appendOutcome{fmt.Sprintf("w%d:%d", w, i), code, stderr})
				mu.Unlock()
			}
		}()
	}
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	deadline := time.Now().Add(2 * time.Minute)
	for done := 0; done < kills && time.Now().Before(deadline); {
		time.Sleep(time.Duration(50+rng.Intn(350)) * time.Millisecond)
		mu.Lock()
		for p := range running {
			if p.Signal(syscall.SIGKILL) == nil {
				done++
			}
			break
		}
		mu.Unlock()
	}
	close(stop)
	wg.Wait()
	// One more append repairs what a kill in mid-append left.
	if code, stderr := recfsAppend(context.Background(), path, []byte("final|"), nil); code != 0 {
		t.Fatalf("append after the kills: exit %d: %s", code, stderr)
	}
	checkOutcomes(t, outcomes, presentKeys(t, path, k), []string{"seed", "final"}, true)
}

// TestKilledMountLosesNoClosedRecord: a --rw mount of a recordio file with
// a trailer takes records by close(2) while `recfs append` processes append
// to the same file, and the mount daemon is SIGKILLed and remounted again
// and again (3 times, 20 under RECFS_SOAK=1). A record whose close returned
// 0, and every append that exited 0, is in the file exactly once.
func TestKilledMountLosesNoClosedRecord(t *testing.T) {
	needFUSE(t)
	k := appendKinds[1]
	src := filepath.Join(t.TempDir(), "m.rio")
	createForAppends(t, src, k)
	rounds := 3
	if soak() {
		rounds = 20
	}
	var (
		mu       sync.Mutex
		outcomes []appendOutcome
	)
	record := func(o appendOutcome) {
		mu.Lock()
		outcomes = append(outcomes, o)
		mu.Unlock()
	}
	stopCLI := make(chan struct{})
	cliDone := make(chan struct{})
	go func() {
		defer close(cliDone)
		rng := rand.New(rand.NewSource(7))
		for i := 0; ; i++ {
			select {
			case <-stopCLI:
				return
			default:
			}
			code, stderr := recfsAppend(context.Background(), src, appendRecord(rng, 9, i, 200000), nil)
			record(appendOutcome{fmt.Sprintf("w9:%d", i), code, stderr})
		}
	}()
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	seq := 0
	for round := range rounds {
		mnt := newMountDir(t)
		m := startMount(t, src, mnt, "--rw", "--no-cache")
		stopped := make(chan struct{})
		go func() {
			defer close(stopped)
			wr := rand.New(rand.NewSource(int64(round)))
			for {
				key := fmt.Sprintf("m:%d", seq)
				rec := append([]byte(key+"|"), bytes.Repeat([]byte("m"), wr.Intn(100000))...)
				err := os.WriteFile(filepath.Join(mnt, fmt.Sprint("s", seq)), rec, 0o644)
				seq++
				if err != nil {
					record(appendOutcome{key, -1, err.Error()}) // the daemon is gone: unknown
					return
				}
				record(appendOutcome{key, 0, ""})
			}
		}()
		time.Sleep(time.Duration(300+rng.Intn(700)) * time.Millisecond)
		if err := m.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-m.done
		_ = syscall.Unmount(mnt, syscall.MNT_DETACH)
		select {
		case <-stopped:
		case <-time.After(exitTimeout):
			t.Fatal("the mount writer did not stop after the daemon was killed")
		}
	}
	close(stopCLI)
	<-cliDone
	if code, stderr := recfsAppend(context.Background(), src, []byte("final|"), nil); code != 0 {
		t.Fatalf("append after the kills: exit %d: %s", code, stderr)
	}
	checkOutcomes(t, outcomes, presentKeys(t, src, k), []string{"seed", "final"}, true)
}
