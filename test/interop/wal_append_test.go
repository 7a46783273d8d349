package interop

// `recfs append` on the logs of real database writers: a pebble WAL that
// pebble left open (recfs must continue it in pebble's own chunk flavour and
// log number, and pebble's reader must read everything back), one that
// pebble closed (refused, file untouched), and the logs of databases that
// are open right now (refused unless --force).

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/record"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/syndtr/goleveldb/leveldb"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// recfsBin builds the recfs binary once per test run, in a directory of
// its own that cleanupBin removes.
func recfsBin(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "recfs-interop-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "recfs")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", binPath, "github.com/recfs/recfs/cmd/recfs")
		cmd.Dir = "../.."
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// cleanupBin removes what recfsBin built, if anything; TestMain calls it
// once every test has returned.
func cleanupBin() {
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
}

// recfsAppendCLI runs `recfs append [flags] path` with one input file per
// record and returns the exit code and stderr.
func recfsAppendCLI(t *testing.T, path string, recs [][]byte, flags ...string) (int, string) {
	t.Helper()
	dir := t.TempDir()
	args := append([]string{"append"}, flags...)
	args = append(args, path)
	for i, r := range recs {
		in := filepath.Join(dir, fmt.Sprintf("in%d", i))
		if err := os.WriteFile(in, r, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, in)
	}
	// Build (or find) the binary first: the minute below is the append's
	// alone, not shared with a build that takes longer on a busy machine.
	bin := recfsBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), stderr.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, stderr.String()
}

// syncFile is the file pebble's LogWriter writes and syncs. Once detached
// it swallows writes, so the writer's goroutine can be ended (by Close)
// without its end-of-log marker reaching the file: the file stays as a
// running or crashed pebble leaves it.
type syncFile struct {
	mu       sync.Mutex
	f        *os.File
	detached bool
}

func (s *syncFile) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.detached {
		return len(p), nil
	}
	return s.f.Write(p)
}

func (s *syncFile) Sync() error { return s.f.Sync() }

func (s *syncFile) detach() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.detached = true
}

// pebbleWAL writes recs to path with pebble's WAL writer, each record
// synced. With closeIt the writer is closed, which ends the log with
// pebble's end-of-log marker; otherwise the file is left as a running (or
// crashed) pebble leaves it, and done ends the writer's goroutine without
// touching the file.
func pebbleWAL(t *testing.T, path string, recs [][]byte, walSync, closeIt bool) (done func()) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	sem := make(chan struct{}, 64) // a slot is taken per sync request, as pebble's commit pipeline does
	sf := &syncFile{f: f}
	w := record.NewLogWriter(sf, pebbleLogNum, record.LogWriterConfig{
		WriteWALSyncOffsets: func() bool { return walSync },
		QueueSemChan:        sem,
	})
	for i, r := range recs {
		sem <- struct{}{}
		var wg sync.WaitGroup
		var serr error
		wg.Add(1)
		if _, err := w.SyncRecord(r, &wg, &serr); err != nil {
			t.Fatalf("pebble SyncRecord %d: %v", i, err)
		}
		wg.Wait()
		if serr != nil {
			t.Fatalf("pebble sync %d: %v", i, serr)
		}
	}
	if closeIt {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		return func() {}
	}
	return func() {
		sf.detach()
		w.Close()
		f.Close()
	}
}

// walRecords returns a random mix of record sizes, some spanning blocks.
func walRecords(rng *rand.Rand, n int) [][]byte {
	var recs [][]byte
	for i := 0; i < n; i++ {
		size := rng.Intn(400)
		if rng.Intn(4) == 0 {
			size = 32700 + rng.Intn(40000)
		}
		b := make([]byte, size)
		rng.Read(b)
		recs = append(recs, b)
	}
	return recs
}

// TestPebbleOpenWALAppend: pebble writes a WAL (recyclable or WAL-sync
// chunks) and leaves it open; recfs appends; pebble's reader returns every
// record, pebble's and recfs's, in order.
func TestPebbleOpenWALAppend(t *testing.T) {
	for _, walSync := range []bool{false, true} {
		t.Run(fmt.Sprint("walsync=", walSync), func(t *testing.T) {
			for seed := int64(1); seed <= 4; seed++ {
				rng := rand.New(rand.NewSource(seed))
				dir := t.TempDir()
				live := filepath.Join(dir, "live.log")
				base := walRecords(rng, 1+rng.Intn(8))
				pebbleWAL(t, live, base, walSync, false)()
				b, err := os.ReadFile(live)
				if err != nil {
					t.Fatal(err)
				}
				path := filepath.Join(dir, "000007.log")
				if err := os.WriteFile(path, b, 0o644); err != nil {
					t.Fatal(err)
				}
				more := walRecords(rng, 1+rng.Intn(5))
				if code, stderr := recfsAppendCLI(t, path, more); code != 0 {
					t.Fatalf("seed %d: recfs append: exit %d: %s", seed, code, stderr)
				}
				got, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.HasPrefix(got, b) {
					t.Fatalf("seed %d: recfs changed pebble's bytes", seed)
				}
				recs, err := readPebble(got)
				if err != nil {
					t.Fatalf("seed %d: pebble reads %d records, then %v", seed, len(recs), err)
				}
				want := append(append([][]byte{}, base...), more...)
				if len(recs) != len(want) {
					t.Fatalf("seed %d: pebble reads %d records, want %d", seed, len(recs), len(want))
				}
				for i := range want {
					if !bytes.Equal(recs[i], want[i]) {
						t.Fatalf("seed %d: record %d differs", seed, i)
					}
				}
				// Every record, pebble's and recfs's, is of pebble's chunk
				// flavour (no legacy chunks inside a WAL).
				hdr := map[bool]uint8{false: 11, true: 19}[walSync]
				for i, loc := range recfsReadLog(got, nil).Locs {
					if loc.Hdr != hdr {
						t.Fatalf("seed %d: record %d has %d-byte chunk headers, want %d", seed, i, loc.Hdr, hdr)
					}
				}
				if walSync {
					continue // pebble's chunks carry the offsets it synced, recfs's claim none
				}
				// The bytes are those pebble writes for all the records in one
				// session (pebble zero-fills a short block tail at once).
				one := filepath.Join(dir, "one.log")
				pebbleWAL(t, one, want, false, false)()
				p, err := os.ReadFile(one)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) > len(p) || !bytes.Equal(got, p[:len(got)]) || !allZero(p[len(got):]) {
					t.Fatalf("seed %d: recfs's append (%d bytes) differs from one pebble session (%d bytes) at %d", seed, len(got), len(p), firstDiff(got, p))
				}
			}
		})
	}
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// TestPebbleClosedWALAppendRefused: a WAL pebble closed ends in its
// end-of-log marker; recfs append refuses, says why, and leaves the file
// byte-identical, also when retried.
func TestPebbleClosedWALAppendRefused(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	path := filepath.Join(t.TempDir(), "000007.log")
	base := walRecords(rng, 5)
	pebbleWAL(t, path, base, false, true)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for try := 0; try < 2; try++ {
		code, stderr := recfsAppendCLI(t, path, [][]byte{[]byte("late")})
		if code == 0 || !strings.Contains(stderr, "closed by its writer") {
			t.Fatalf("append to a closed WAL: exit %d, %q", code, stderr)
		}
		after, _ := os.ReadFile(path)
		if !bytes.Equal(before, after) {
			t.Fatalf("try %d: the refused append changed the file (%d -> %d bytes)", try, len(before), len(after))
		}
	}
	if recs, err := readPebble(before); err != nil || len(recs) != len(base) {
		t.Fatalf("pebble reads %d records, %v", len(recs), err)
	}
}

// TestLiveDatabaseAppendRefused: the log of a database that is open right
// now (its LOCK held: goleveldb by flock, pebble by fcntl) is refused with
// an error naming the LOCK file; --force appends.
func TestLiveDatabaseAppendRefused(t *testing.T) {
	cases := []struct {
		name string
		open func(t *testing.T, dir string) (log string, closeDB func())
	}{
		{"goleveldb", func(t *testing.T, dir string) (string, func()) {
			db, err := leveldb.OpenFile(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 10; i++ {
				if err := db.Put([]byte(fmt.Sprint("k", i)), []byte("v"), nil); err != nil {
					t.Fatal(err)
				}
			}
			logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
			if len(logs) != 1 {
				t.Fatalf("goleveldb logs: %v", logs)
			}
			return logs[0], func() { db.Close() }
		}},
		{"pebble", func(t *testing.T, dir string) (string, func()) {
			// pebble's DB takes its directory lock with vfs.Default.Lock
			// (LockDirectory); its package is not built here, its lock
			// and WAL writer are.
			lock, err := vfs.Default.Lock(filepath.Join(dir, "LOCK"))
			if err != nil {
				t.Fatal(err)
			}
			log := filepath.Join(dir, "000007.log")
			done := pebbleWAL(t, log, walRecords(rand.New(rand.NewSource(3)), 4), false, false)
			return log, func() { done(); lock.Close() }
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			log, closeDB := c.open(t, dir)
			defer closeDB()
			before, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			lock := filepath.Join(dir, "LOCK")
			code, stderr := recfsAppendCLI(t, log, [][]byte{[]byte("x")})
			if code == 0 || !strings.Contains(stderr, lock) || !strings.Contains(stderr, "--force") {
				t.Fatalf("append to an open database's log: exit %d, %q", code, stderr)
			}
			if after, _ := os.ReadFile(log); !bytes.Equal(before, after) {
				t.Fatalf("the refused append changed the log (%d -> %d bytes)", len(before), len(after))
			}
			if code, stderr := recfsAppendCLI(t, log, [][]byte{[]byte("x")}, "--force"); code != 0 {
				t.Fatalf("--force: exit %d, %q", code, stderr)
			}
			if after, _ := os.ReadFile(log); len(after) <= len(before) {
				t.Fatalf("--force appended nothing")
			}
		})
	}
}
