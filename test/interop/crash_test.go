package interop

// SIGKILL crash tests of recfs's appenders. The test binary re-executes
// itself (os.Args[0]) as a child that appends forever and prints, after each
// append has returned, how many items/records are acknowledged; the parent
// kills it at a random moment and checks the file with the reference
// readers.

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Environment of the crash child.
const (
	envChild = "RECFS_INTEROP_CRASH_CHILD" // "rio", "log" or "tfr"
	envPath  = "RECFS_INTEROP_CRASH_PATH"
	envSeed  = "RECFS_INTEROP_CRASH_SEED"
	envStart = "RECFS_INTEROP_CRASH_START" // index of the first item to append
)

// childDeadline bounds a child that nobody kills.
const childDeadline = 60 * time.Second

func TestMain(m *testing.M) {
	if mode := os.Getenv(envChild); mode != "" {
		if err := crashChild(mode); err != nil {
			fmt.Fprintln(os.Stderr, "crash child:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	code := m.Run()
	cleanupBench()
	cleanupBin()
	os.Exit(code)
}

// crashItem is item i of the sequence a crash child with this seed appends:
// deterministic, so the parent can check what survived.
func crashItem(seed int64, i int) []byte {
	h := uint64(seed)*0x9E3779B97F4A7C15 ^ uint64(i)*0xBF58476D1CE4E5B9
	h ^= h >> 31
	n := 0
	switch h % 8 {
	case 0:
		n = 0
	case 1:
		n = int(h>>8) % (3 * rioMaxPayload) // spans chunks
	default:
		n = int(h>>8) % 3000
	}
	return payload(i+int(seed%1000), n)
}

// crashChild appends items from $envStart on until killed (or the deadline).
func crashChild(mode string) error {
	path := os.Getenv(envPath)
	seed, err := strconv.ParseInt(os.Getenv(envSeed), 10, 64)
	if err != nil {
		return err
	}
	start, err := strconv.Atoi(os.Getenv(envStart))
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewSource(seed ^ int64(start)))
	deadline := time.Now().Add(childDeadline)
	switch mode {
	case "rio":
		a, err := openRioAppender(path, rng.Intn(4))
		if err != nil {
			return err
		}
		for i := start; time.Now().Before(deadline); {
			k := 1 + rng.Intn(3)
			batch := make([][]byte, k)
			for j := range batch {
				batch[j] = crashItem(seed, i+j)
			}
			if err := a.Append(batch...); err != nil {
				return err
			}
			i += k
			// One write(2) per line: the parent sees whole lines only.
			if _, err := fmt.Fprintf(os.Stdout, "%d\n", i); err != nil {
				return err
			}
		}
		return a.Close()
	case "log":
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		st, err := f.Stat()
		if err != nil {
			return err
		}
		i := start
		lw := recfsLogWriter(f, st.Size())
		for ; time.Now().Before(deadline); i++ {
			if _, err := lw.WriteRecord(crashItem(seed, i)); err != nil {
				return err
			}
			if err := lw.Flush(); err != nil {
				return err
			}
			if err := f.Sync(); err != nil {
				return err
			}
			if _, err := fmt.Fprintf(os.Stdout, "%d %d\n", i+1, lw.Offset()); err != nil {
				return err
			}
		}
		return f.Close()
	case "tfr":
		return tfrCrashChild(path, seed, start, rng, deadline)
	}
	return fmt.Errorf("unknown mode %q", mode)
}

// ack is the last line a crash child printed: acknowledged count and, for
// logs, the log offset just after the last acknowledged record.
type ack struct {
	n   int
	end int64
}

// runAndKill starts a crash child, lets it run for a random while and
// SIGKILLs it. It returns the last acknowledgement the child printed.
func runAndKill(t *testing.T, rng *rand.Rand, mode, path string, seed int64, start int, prev ack) ack {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(),
		envChild+"="+mode, envPath+"="+path,
		envSeed+"="+strconv.FormatInt(seed, 10), envStart+"="+strconv.Itoa(start))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan ack, 1)
	started := make(chan struct{}) // closed at the first acknowledgement or at EOF
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		cur := prev
		once := sync.OnceFunc(func() { close(started) })
		defer once()
		for sc.Scan() {
			once()
			f := strings.Fields(sc.Text())
			if len(f) == 0 {
				continue
			}
			n, err := strconv.Atoi(f[0])
			if err != nil {
				continue
			}
			cur.n = n
			if len(f) > 1 {
				cur.end, _ = strconv.ParseInt(f[1], 10, 64)
			}
		}
		lines <- cur
	}()
	// Usually wait for the first acknowledgement, so that a loaded machine
	// (slow child start-up) still makes progress, then kill at a random
	// moment; sometimes kill at a random moment from the start, possibly
	// before the appender has opened the file.
	if rng.Intn(4) != 0 {
		select {
		case <-started:
		case <-time.After(childDeadline / 2):
			t.Errorf("child acknowledged nothing in %v", childDeadline/2)
		}
	}
	time.Sleep(time.Duration(rng.Intn(150)) * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	last := <-lines
	werr := cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("child was not killed: %v, stderr %s", werr, stderr.String())
	}
	return last
}

// TestCrashRecordIOAppend: a recordio file (written by grailbio's writer,
// with and without trailer) is appended to through recfs's appender by a
// child that is SIGKILLed at random moments. After each kill, RepairRecordIO
// runs and grailbio's scanner must read every item whose Append returned,
// in order, with the trailer intact.
func TestCrashRecordIOAppend(t *testing.T) {
	for _, withTrailer := range []bool{false, true} {
		t.Run(fmt.Sprintf("trailer=%v", withTrailer), func(t *testing.T) {
			seed := testSeeds(t, 1)[0]
			rng := rand.New(rand.NewSource(seed))
			path := filepath.Join(t.TempDir(), "crash.rio")
			initial := 1 + rng.Intn(5)
			items := make([][]byte, initial)
			for i := range items {
				items[i] = crashItem(seed, i)
			}
			spec := rioSpec{Header: nil}
			if withTrailer {
				spec.Trailer = []byte(fmt.Sprintf("trailer of seed %d", seed))
			}
			b, err := writeGrail(items, spec)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			have := initial // items in the file
			acked := ack{n: initial}
			kills, growth, repaired := 0, 0, 0
			for iter := 0; iter < 14; iter++ {
				a := runAndKill(t, rng, "rio", path, seed, have, acked)
				kills++
				fixed, err := repairRio(path)
				if err != nil {
					t.Fatalf("iteration %d: RepairRecordIO: %v", iter, err)
				}
				if fixed {
					repaired++
				}
				f, err := os.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				g := readGrail(f, false)
				f.Close()
				if g.Err != nil {
					t.Fatalf("iteration %d (acked %d): grailbio scanner after repair: %v", iter, a.n, g.Err)
				}
				if len(g.Items) < a.n {
					t.Fatalf("iteration %d: grailbio reads %d items, %d were acknowledged", iter, len(g.Items), a.n)
				}
				for i, it := range g.Items {
					if !bytes.Equal(it, crashItem(seed, i)) {
						t.Fatalf("iteration %d: item %d (%d bytes) is not what was appended", iter, i, len(it))
					}
				}
				if withTrailer {
					if !bytes.Equal(g.Trailer, spec.Trailer) || g.TrailErr != nil {
						t.Fatalf("iteration %d: trailer %q, err %v; want %q", iter, g.Trailer, g.TrailErr, spec.Trailer)
					}
				} else if g.Trailer != nil {
					t.Fatalf("iteration %d: unexpected trailer", iter)
				}
				if _, err := os.Stat(path + ".recfs-journal"); !os.IsNotExist(err) {
					t.Fatalf("iteration %d: journal left after repair: %v", iter, err)
				}
				growth += len(g.Items) - have
				have = len(g.Items)
				acked = ack{n: have}
			}
			t.Logf("%d kills (%d left something to repair), %d items appended in total (%d in file)", kills, repaired, growth, have)
			if growth == 0 {
				t.Errorf("no append ever completed in %d runs: the test did not exercise anything", kills)
			}
		})
	}
}

// TestCrashLeveldbAppend: a leveldb log is appended to by a child using
// recfs's LogWriter with Offset = file size and an fsync per record, and
// SIGKILLed at random moments. After each kill goleveldb and pebble must
// read every acknowledged record (a torn tail may be lost or reported); the
// next session starts after truncating the file to the last acknowledged
// record's end, as an application recovering from its own acknowledgements
// would.
func TestCrashLeveldbAppend(t *testing.T) {
	seed := testSeeds(t, 1)[0]
	rng := rand.New(rand.NewSource(seed))
	path := filepath.Join(t.TempDir(), "crash.log")
	initial := rng.Intn(5)
	var recs [][]byte
	for i := 0; i < initial; i++ {
		recs = append(recs, crashItem(seed, i))
	}
	b := mustGoleveldb(t, recs)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	acked := ack{n: initial, end: int64(len(b))}
	total, torn := 0, 0
	for iter := 0; iter < 14; iter++ {
		a := runAndKill(t, rng, "log", path, seed, acked.n, acked)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(b)) < a.end {
			t.Fatalf("iteration %d: file has %d bytes, %d were acknowledged", iter, len(b), a.end)
		}
		gr, drops, gerr := readGoleveldb(b)
		pr, perr := readPebble(b)
		for name, got := range map[string][][]byte{"goleveldb": gr, "pebble": pr} {
			if len(got) < a.n {
				t.Fatalf("iteration %d: %s reads %d records, %d acknowledged (goleveldb err %v drops %q, pebble err %v)",
					iter, name, len(got), a.n, gerr, drops, perr)
			}
			for i, r := range got {
				if !bytes.Equal(r, crashItem(seed, i)) {
					t.Fatalf("iteration %d: %s record %d (%d bytes) is not what was written", iter, name, i, len(r))
				}
			}
		}
		// The acknowledged prefix must read cleanly by itself.
		if a.end > 0 {
			gr, drops, gerr := readGoleveldb(b[:a.end])
			if gerr != nil || len(drops) > 0 || len(gr) != a.n {
				t.Fatalf("iteration %d: acknowledged prefix: %d records (want %d), err %v, drops %q", iter, len(gr), a.n, gerr, drops)
			}
		}
		total += a.n - acked.n
		if int64(len(b)) > a.end {
			torn++ // killed with unacknowledged bytes written
		}
		if err := os.Truncate(path, a.end); err != nil {
			t.Fatal(err)
		}
		acked = a
	}
	t.Logf("%d records acknowledged over 14 kills; %d kills left unacknowledged bytes", total, torn)
	if total == 0 {
		t.Error("no record was ever acknowledged: the test did not exercise anything")
	}
}
