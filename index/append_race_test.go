package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/recfs/recfs/codec/codectest/recfile"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
)

// appendKinds are the appendable formats the race tests run on.
var appendKinds = []struct {
	name    string
	format  codec.Format
	trailer bool
}{
	{"leveldb", codec.LevelDB, false},
	{"recordio", codec.RecordIO, false},
	{"recordio-trailer", codec.RecordIO, true},
}

// newRecordFile creates a record file of the kind with one record "seed".
func newRecordFile(t *testing.T, path string, f codec.Format, trailer bool) {
	t.Helper()
	tb, err := Create(context.Background(), path, f, trailer, Options{CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	if _, err := tb.Append(context.Background(), [][]byte{[]byte("seed")}, AppendOptions{}); err != nil {
		t.Fatal(err)
	}
}

// allRecords reads every record of a table.
func allRecords(t *testing.T, tb *Table) []string {
	t.Helper()
	var out []string
	for n := range tb.Len() {
		out = append(out, string(readRecord(t, tb, n)))
	}
	return out
}

// TestAppendAfterOtherTableAppended: a second table (another process, in
// real life) appends between this table's open and its append. The append
// catches up under the lock and succeeds; its result is the truth.
func TestAppendAfterOtherTableAppended(t *testing.T) {
	ctx := context.Background()
	for _, k := range appendKinds {
		t.Run(k.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f")
			newRecordFile(t, path, k.format, k.trailer)
			o := Options{CacheDir: "-", Writable: true}
			a, err := Open(ctx, path, o)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			b, err := Open(ctx, path, o)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if first, err := b.Append(ctx, [][]byte{[]byte("from b")}, AppendOptions{}); err != nil || first != 1 {
				t.Fatalf("b: first %d, %v", first, err)
			}
			first, err := a.Append(ctx, [][]byte{[]byte("from a"), []byte("and more")}, AppendOptions{})
			if err != nil || first != 2 {
				t.Fatalf("a after b: first %d, %v", first, err)
			}
			c, err := Open(ctx, path, Options{CacheDir: "-"})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			want := []string{"seed", "from b", "from a", "and more"}
			for _, tb := range []*Table{a, c} {
				if got := allRecords(t, tb); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("records %q, want %q", got, want)
				}
			}
		})
	}
}

// TestAppendWaitsAndCatchesUp: another appender holds the lock when an
// append starts and adds a record before it lets go. The append waits,
// catches up with that record, and lands after it, successfully.
func TestAppendWaitsAndCatchesUp(t *testing.T) {
	ctx := context.Background()
	for _, k := range appendKinds {
		t.Run(k.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f")
			newRecordFile(t, path, k.format, k.trailer)
			after := appendedCopy(t, path, "other")
			a, err := Open(ctx, path, Options{CacheDir: "-", Writable: true})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			f := otherAppender(t, path)
			type res struct {
				first int64
				err   error
			}
			waits := lockWaitsFor(t)
			done := make(chan res, 1)
			go func() {
				first, err := a.Append(ctx, [][]byte{[]byte("mine")}, AppendOptions{})
				done <- res{first, err}
			}()
			select {
			case <-waits: // the append found the lock held
			case r := <-done:
				t.Fatalf("append went ahead while another appender held the lock: first %d, %v", r.first, r.err)
			}
			if _, err := f.WriteAt(after, 0); err != nil { // the other append
				t.Fatal(err)
			}
			syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
			r := <-done
			if r.err != nil || r.first != 2 {
				t.Fatalf("append after waiting: first %d, %v", r.first, r.err)
			}
			if got := allRecords(t, a); fmt.Sprint(got) != "[seed other mine]" {
				t.Fatalf("records %q", got)
			}
		})
	}
}

// otherAppender opens the file at path for writing and takes its append
// lock, as another appender would; the file is closed when t ends.
func otherAppender(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	return f
}

// lockWaitsFor makes lockDest report, on the returned channel, that it
// found the append lock held and waits for it, until t ends.
func lockWaitsFor(t *testing.T) <-chan struct{} {
	waits := make(chan struct{}, 1)
	lockWaits = func() {
		select {
		case waits <- struct{}{}:
		default:
		}
	}
	t.Cleanup(func() { lockWaits = nil })
	return waits
}

// appendedCopy returns the bytes the record file at path has after rec is
// appended to it (appending to a copy).
func appendedCopy(t *testing.T, path, rec string) []byte {
	t.Helper()
	b, _ := os.ReadFile(path)
	scratch := path + ".scratch"
	recfile.WriteFile(t, scratch, b)
	defer os.Remove(scratch)
	st, err := Open(context.Background(), scratch, Options{CacheDir: "-", Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Append(context.Background(), [][]byte{[]byte(rec)}, AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(scratch)
	return after
}

// TestWritableOpenWaitsForAppendLock: a writable open repairs only under
// the append lock. While another appender holds the lock with its append
// half written, the open waits, and afterwards keeps the finished append
// instead of "repairing" it away.
func TestWritableOpenWaitsForAppendLock(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "f.rio")
	newRecordFile(t, path, codec.RecordIO, true)
	before, _ := os.ReadFile(path)
	// What the other appender will leave: the same file after one append.
	after := appendedCopy(t, path, strings.Repeat("n", 50000))
	toff := int64(len(before)) - 32768 // the old one-chunk trailer block

	f := otherAppender(t, path)
	half := toff + 40000
	if _, err := f.WriteAt(after[toff:half], toff); err != nil { // torn, mid-append
		t.Fatal(err)
	}
	type opened struct {
		tb  *Table
		err error
	}
	waits := lockWaitsFor(t)
	done := make(chan opened, 1)
	go func() {
		tb, err := Open(ctx, path, Options{CacheDir: "-", Writable: true})
		done <- opened{tb, err}
	}()
	select {
	case o := <-done:
		if o.tb != nil {
			o.tb.Close()
		}
		t.Fatalf("writable open went ahead while an append held the lock (err %v)", o.err)
	case <-waits: // the open found the lock held
	}
	if _, err := f.WriteAt(after[half:], half); err != nil {
		t.Fatal(err)
	}
	f.Sync()
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	o := <-done
	if o.err != nil {
		t.Fatal(o.err)
	}
	defer o.tb.Close()
	got, _ := os.ReadFile(path)
	if !bytes.Equal(got, after) {
		t.Fatalf("finished append rolled back: %d bytes, want %d", len(got), len(after))
	}
	if o.tb.Len() != 2 || !o.tb.HasTrailer() {
		t.Fatalf("%d records, trailer %v", o.tb.Len(), o.tb.HasTrailer())
	}
}

// tornLog writes a leveldb log of three records followed by a torn record
// and returns its bytes and where the torn tail starts.
func tornLog(t *testing.T, path string) ([]byte, int64) {
	t.Helper()
	recfile.WriteLog(t, path, codectest.Records(3, 100, 'a'))
	return tearLog(t, path, 40000)
}

// tearLog appends to the leveldb log at path the first keep bytes of a
// 70,000-byte record, as a writer that crashed mid-record leaves it, and
// returns the file's bytes and where the torn tail starts.
func tearLog(t *testing.T, path string, keep int) ([]byte, int64) {
	t.Helper()
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recfile.AppendLog(t, path, bytes.Repeat([]byte("T"), 70000))
	whole, _ := os.ReadFile(path)
	torn := whole[:len(good)+keep]
	if err := os.WriteFile(path, torn, 0o644); err != nil {
		t.Fatal(err)
	}
	return torn, int64(len(good))
}

// TestTornBackupNeverThroughSymlink: a symlink planted at the torn-tail
// backup's name is not followed; the backup goes to a new name beside it.
func TestTornBackupNeverThroughSymlink(t *testing.T) {
	ctx := context.Background()
	dir, cache := t.TempDir(), t.TempDir()
	path := filepath.Join(dir, "a.log")
	torn, from := tornLog(t, path)
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("ROOT ONLY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(cache, "torn"), 0o700); err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(cache, "torn", fmt.Sprintf("a.log.%d-%d", from, len(torn)))
	if err := os.Symlink(secret, planted); err != nil {
		t.Fatal(err)
	}
	tb, err := Open(ctx, path, Options{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	if _, err := tb.Append(ctx, [][]byte{[]byte("after")}, AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(secret); string(b) != "ROOT ONLY\n" {
		t.Fatalf("symlink target overwritten: %q…", b[:min(len(b), 16)])
	}
	saved, err := os.ReadFile(planted + ".1")
	if err != nil || !bytes.Equal(saved, torn[from:]) {
		t.Fatalf("torn bytes not saved beside the planted link: %v", err)
	}
	if fi, _ := os.Stat(planted + ".1"); fi.Mode().Perm() != 0o600 {
		t.Fatalf("backup mode %v, want 0600", fi.Mode().Perm())
	}
}

// TestTornTailNeedsPrivateDir: with no private cache directory (no $HOME,
// no $XDG_CACHE_HOME, or one others can write) the torn tail is neither
// saved in a shared place nor cut off: the append fails with
// ErrNoPrivateDir and the file is left byte-identical.
func TestTornTailNeedsPrivateDir(t *testing.T) {
	ctx := context.Background()
	shared := t.TempDir()
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(shared, "torn"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(shared, "torn"), 0o777); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		cache string
		env   bool
	}{
		{"no-home", "-", true},
		{"no-home-writable-open", "", true},
		{"world-writable", shared, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.env {
				t.Setenv("HOME", "")
				t.Setenv("XDG_CACHE_HOME", "")
			}
			path := filepath.Join(t.TempDir(), "a.log")
			torn, _ := tornLog(t, path)
			tb, err := Open(ctx, path, Options{CacheDir: c.cache, Writable: c.name == "no-home-writable-open"})
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			_, err = tb.Append(ctx, [][]byte{[]byte("after")}, AppendOptions{})
			if !errors.Is(err, ErrNoPrivateDir) {
				t.Fatalf("append: %v, want ErrNoPrivateDir", err)
			}
			if b, _ := os.ReadFile(path); !bytes.Equal(b, torn) {
				t.Fatalf("refused append changed the file (%d bytes, was %d)", len(b), len(torn))
			}
			if got, _ := filepath.Glob(filepath.Join(shared, "torn", "*")); len(got) != 0 {
				t.Fatalf("torn tail saved in a shared directory: %v", got)
			}
		})
	}
}

// TestAppendNeverThroughReplacedPath: after the table's path is made a
// symlink to another file, an append fails with ErrReplaced and writes
// neither the link's target nor the old file.
func TestAppendNeverThroughReplacedPath(t *testing.T) {
	ctx := context.Background()
	for _, writable := range []bool{false, true} {
		t.Run(fmt.Sprint("writable=", writable), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "a.log")
			recfile.WriteLog(t, path, codectest.Records(2, 10, 'a'))
			orig, _ := os.ReadFile(path)
			tb, err := Open(ctx, path, Options{CacheDir: "-", Writable: writable})
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			target := filepath.Join(dir, "target") // empty: a valid empty log
			if err := os.WriteFile(target, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(path, filepath.Join(dir, "moved.log")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
			if _, err := tb.Append(ctx, [][]byte{[]byte("x")}, AppendOptions{}); !errors.Is(err, ErrReplaced) {
				t.Fatalf("append after the path was replaced: %v, want ErrReplaced", err)
			}
			if b, _ := os.ReadFile(target); len(b) != 0 {
				t.Fatalf("append wrote %d bytes through the planted symlink", len(b))
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "moved.log")); !bytes.Equal(b, orig) {
				t.Fatal("append wrote to the old file")
			}
		})
	}
}

// TestFailedAppendLeavesFileIdentical: an append that fails half-way (the
// file-size limit cuts its write short) puts the file back byte for byte,
// torn tail and trailer included, under the lock.
func TestFailedAppendLeavesFileIdentical(t *testing.T) {
	ctx := context.Background()
	signal.Ignore(syscall.SIGXFSZ)
	defer signal.Reset(syscall.SIGXFSZ)
	big := bytes.Repeat([]byte("B"), 300000)
	for _, k := range append(appendKinds, struct {
		name    string
		format  codec.Format
		trailer bool
	}{"leveldb-torn", codec.LevelDB, false}) {
		t.Run(k.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f")
			if k.name == "leveldb-torn" {
				tornLog(t, path)
			} else {
				newRecordFile(t, path, k.format, k.trailer)
			}
			orig, _ := os.ReadFile(path)
			tb, err := Open(ctx, path, Options{CacheDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			n := tb.Len()
			var lim, old syscall.Rlimit
			syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old)
			lim = old
			lim.Cur = uint64(len(orig)) + 150000
			if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
				t.Skip(err)
			}
			_, err = tb.Append(ctx, [][]byte{[]byte("small"), big}, AppendOptions{})
			syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old)
			if err == nil {
				t.Fatal("append past the file-size limit succeeded")
			}
			if b, _ := os.ReadFile(path); !bytes.Equal(b, orig) {
				t.Fatalf("failed append left %d bytes, file had %d", len(b), len(orig))
			}
			if tb.Len() != n {
				t.Fatalf("table has %d records after a failed append, had %d", tb.Len(), n)
			}
			if _, err := os.Stat(path + RecordIOJournalSuffix); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("journal left: %v", err)
			}
			// And the next append works.
			if _, err := tb.Append(ctx, [][]byte{[]byte("ok")}, AppendOptions{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestAppendChecksPathThroughReopen: with a local source's reopen (a mount that
// resolves names beneath its root), Append asks Reopen, not the path
// string, whether the path still names the file: a source directory moved
// while mounted takes appends still, and a file swapped in beneath the
// root is refused.
func TestAppendChecksPathThroughReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "a.log")
	recfile.WriteLog(t, path, codectest.Records(2, 10, 'a'))
	cur := path // what the mount's root-relative resolution finds now
	o := Options{CacheDir: "-", Writable: true}
	reopen := func() (*os.File, error) { return os.Open(cur) }
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The name the table knows the file by, which no longer resolves (the
	// mounted directory was moved away).
	tb, err := openFile(ctx, f, filepath.Join(dir, "moved-away", "a.log"), reopen, o)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	if _, err := tb.Append(ctx, [][]byte{[]byte("x")}, AppendOptions{}); err != nil {
		t.Fatalf("append with Reopen finding the file: %v", err)
	}
	other := filepath.Join(dir, "other.log")
	recfile.WriteLog(t, other, codectest.Records(1, 10, 'b'))
	cur = other
	if _, err := tb.Append(ctx, [][]byte{[]byte("y")}, AppendOptions{}); !errors.Is(err, ErrReplaced) {
		t.Fatalf("append when Reopen finds another file: %v, want ErrReplaced", err)
	}
}
