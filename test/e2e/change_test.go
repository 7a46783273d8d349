package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/recfs/recfs/codec/codectest/recfile"
	"github.com/recfs/recfs/codec/leveldb"
	"github.com/recfs/recfs/codec/recordio"
	"github.com/recfs/recfs/index"
)

// A source file changed under a mount: rewritten in place, replaced by a
// rename, truncated, grown. Readers run through the mount while it
// changes. Every read must return a whole record of some version of the
// file at its number, or fail (EIO): never bytes mixed from two versions
// or of no version. Without --follow a changed source gives EIO (records
// the kernel cached before stay readable) and one log line; with --follow,
// once the change settles, every record shows the new version, those read
// before the change included.

// changeFormats are the formats the test changes: leveldb, and zstd
// recordio (whose decoded blocks recfs caches).
var changeFormats = []string{"leveldb", "recordio-zstd"}

// encodeRecords returns the bytes of a source of format holding recs.
func encodeRecords(t *testing.T, format string, recs [][]byte) []byte {
	t.Helper()
	if format == "leveldb" {
		b, _ := recfile.LogBytes(t, recs, leveldb.WriterOptions{})
		return b
	}
	return recfile.RIOBytes(t, recs, recordio.WriterOptions{Transformers: []string{"zstd"}, MaxItems: 7}, nil)
}

// changeRecords makes n records of the version tagged tag; sizes come from
// seed, so two versions with one seed have the same layout. A few are
// large enough that the kernel reads them in several requests.
func changeRecords(seed int64, tag string, n int) [][]byte {
	rng := rand.New(rand.NewSource(seed))
	out := make([][]byte, n)
	for i := range out {
		l := 20 + rng.Intn(3000)
		if i%9 == 4 {
			l = 200_000 + rng.Intn(100_000)
		}
		b := bytes.Repeat([]byte(tag), l/len(tag)+1)[:l]
		copy(b, fmt.Sprintf("<%s-%d>", tag, i))
		for j := 12; j < l; j += 97 {
			b[j] = byte('a' + (i+j)%26)
		}
		out[i] = b
	}
	return out
}

// versions holds every version a record number may show, by name (a soak
// cycles through a few names, so it stays small).
type versions struct {
	mu sync.Mutex
	vs map[string][][]byte
}

func (v *versions) add(name string, recs [][]byte) {
	v.mu.Lock()
	if v.vs == nil {
		v.vs = map[string][][]byte{}
	}
	v.vs[name] = recs
	v.mu.Unlock()
}

// whole reports whether b is record n of some version.
func (v *versions) whole(n int, b []byte) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, recs := range v.vs {
		if n < len(recs) && bytes.Equal(recs[n], b) {
			return true
		}
	}
	return false
}

// mayLack reports whether some version has no record n.
func (v *versions) mayLack(n int) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, recs := range v.vs {
		if n >= len(recs) {
			return true
		}
	}
	return false
}

// changeMode changes the source at src (holding format's encoding of cur)
// and returns the records it holds afterwards (nil if unknown beyond being
// a prefix of cur: truncation), after adding them to vs before the first
// byte is written.
type changeMode struct {
	name    string
	keepOld bool // without --follow, records not cached before stay readable
	apply   func(t *testing.T, format, src string, cur [][]byte, round int, vs *versions) [][]byte
}

var changeModes = []changeMode{
	{"rewrite in place", false, func(t *testing.T, format, src string, cur [][]byte, round int, vs *versions) [][]byte {
		tag := fmt.Sprintf("R%d", round%3)
		next := changeRecords(1, tag, len(cur))
		vs.add(tag, next)
		b := encodeRecords(t, format, next)
		f, err := os.OpenFile(src, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		// Slowly, so that readers meet a half-written file.
		for off := 0; off < len(b); off += 64 << 10 {
			if _, err := f.WriteAt(b[off:min(off+64<<10, len(b))], int64(off)); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Millisecond)
		}
		if err := f.Truncate(int64(len(b))); err != nil {
			t.Fatal(err)
		}
		return next
	}},
	{"replace by rename", true, func(t *testing.T, format, src string, cur [][]byte, round int, vs *versions) [][]byte {
		tag := fmt.Sprintf("N%d", round%3)
		next := changeRecords(int64(round%3+7), tag, 37+round%3)
		vs.add(tag, next)
		tmp := src + ".tmp"
		if err := os.WriteFile(tmp, encodeRecords(t, format, next), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, src); err != nil {
			t.Fatal(err)
		}
		return next
	}},
	{"truncate", false, func(t *testing.T, format, src string, cur [][]byte, round int, vs *versions) [][]byte {
		fi, err := os.Stat(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(src, fi.Size()/2); err != nil {
			t.Fatal(err)
		}
		return nil
	}},
	{"grow", true, func(t *testing.T, format, src string, cur [][]byte, round int, vs *versions) [][]byte {
		tag := fmt.Sprintf("G%d", round)
		more := changeRecords(int64(round+100), tag, 5)
		next := append(append([][]byte(nil), cur...), more...)
		vs.add(tag, next)
		if format == "leveldb" {
			f, err := os.OpenFile(src, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			fi, _ := f.Stat()
			w := leveldb.NewWriter(f, leveldb.WriterOptions{Offset: fi.Size()})
			for _, r := range more {
				if _, err := w.WriteRecord(r); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			return next
		}
		a, err := index.OpenRecordIOAppender(src, index.RecordIOAppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Append(more...); err != nil {
			t.Fatal(err)
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		return next
	}},
}

func TestSourceChange(t *testing.T) {
	needFUSE(t)
	eachBackend(t, func(t *testing.T, backend string) {
		for _, format := range changeFormats {
			for _, mode := range changeModes {
				for _, follow := range []bool{false, true} {
					if backend == "bazil" && !follow {
						continue // the unfollowed path is the tree's, shared by both
					}
					name := fmt.Sprintf("%s/%s/nofollow", format, mode.name)
					if follow {
						name = fmt.Sprintf("%s/%s/follow", format, mode.name)
					}
					t.Run(name, func(t *testing.T) { sourceChange(t, backend, format, mode, follow) })
				}
			}
		}
	})
}

// readRecordFile reads record n of the mount at dir.
func readRecordFile(dir string, n int) ([]byte, error) {
	return os.ReadFile(filepath.Join(dir, recordName(int64(n), 1000)))
}

// readRecordDirect reads record n of the mount at dir with O_DIRECT, so
// that every read reaches the server instead of the kernel's page cache.
func readRecordDirect(dir string, n int) ([]byte, error) {
	f, err := os.OpenFile(filepath.Join(dir, recordName(int64(n), 1000)), os.O_RDONLY|syscall.O_DIRECT, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []byte
	buf := make([]byte, 128<<10)
	for {
		k, err := f.Read(buf)
		out = append(out, buf[:k]...)
		if errors.Is(err, io.EOF) || err == nil && k == 0 {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// sourceChange runs one change (under soak: changes for a while) with
// readers, then checks what the mount settles on.
func sourceChange(t *testing.T, backend, format string, mode changeMode, follow bool) {
	const n = 40
	cur := changeRecords(1, "A", n)
	cur0 := cur
	var vs versions
	vs.add("A", cur)
	src := writeTemp(t, "src", encodeRecords(t, format, cur))
	dir := newMountDir(t)
	args := []string{"--no-cache", "--backend", backend}
	if follow {
		args = append(args, "--follow", "--follow-interval", "30ms")
	}
	m := startMount(t, src, dir, args...)
	// Even records are read (and cached by the kernel) before the change,
	// the readers read all but those numbered 4k+1 during it, and those are
	// not touched until it is over.
	for i := 0; i < n; i += 2 {
		if b, err := readRecordFile(dir, i); err != nil || !bytes.Equal(b, cur[i]) {
			t.Fatalf("record %d before the change: %d bytes, %v", i, len(b), err)
		}
	}
	var (
		stop              = make(chan struct{})
		wg                sync.WaitGroup
		mu                sync.Mutex
		reads, eio, wrong int
		firstWrong        string
	)
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(r)))
			for {
				select {
				case <-stop:
					return
				default:
				}
				i := rng.Intn(n + 5)
				if i%4 == 1 {
					continue // kept untouched for the final check
				}
				read := readRecordFile
				if r%2 == 1 {
					read = readRecordDirect
				}
				b, err := read(dir, i)
				mu.Lock()
				reads++
				switch {
				case errors.Is(err, syscall.EIO):
					eio++
				case errors.Is(err, os.ErrNotExist) && (mode.name == "truncate" || vs.mayLack(i)):
				case err != nil:
					wrong++
					if firstWrong == "" {
						firstWrong = fmt.Sprintf("record %d: %v", i, err)
					}
				case !vs.whole(i, b):
					wrong++
					if firstWrong == "" {
						firstWrong = fmt.Sprintf("record %d: %d bytes %.24q", i, len(b), b)
					}
				}
				mu.Unlock()
			}
		}()
	}
	deadline := time.Now().Add(soakDuration(0, 30*time.Second))
	round := 0
	var final [][]byte
	for {
		time.Sleep(20 * time.Millisecond)
		next := mode.apply(t, format, src, cur, round, &vs)
		if next == nil {
			next = cur // truncation: a prefix of cur
		}
		final, cur = next, next
		round++
		if time.Now().After(deadline) || mode.name == "truncate" || mode.name == "grow" && round >= 50 {
			break
		}
	}
	time.Sleep(50 * time.Millisecond)
	close(stop)
	wg.Wait()
	t.Logf("%d changes, %d reads during them, %d EIO", round, reads, eio)
	if wrong > 0 {
		t.Fatalf("%d of %d reads returned no whole record of any version; first: %s", wrong, reads, firstWrong)
	}
	if follow {
		settleFollowed(t, dir, mode, final)
		return
	}
	// Not followed: records never read before are EIO after an in-place
	// change, their old selves after a rename or an append.
	for i := 1; i < n; i += 4 {
		b, err := readRecordFile(dir, i)
		switch {
		case mode.keepOld && (err != nil || !bytes.Equal(b, cur0[i])):
			t.Fatalf("record %d after %s: %d bytes, %v; want the old record", i, mode.name, len(b), err)
		case !mode.keepOld && !errors.Is(err, syscall.EIO):
			t.Fatalf("record %d after %s: %d bytes %.24q, %v; want EIO", i, mode.name, len(b), b, err)
		}
	}
	if !mode.keepOld {
		m.logSays("source file changed", 5*time.Second)
		if got := strings.Count(m.stderr.String(), "source file changed"); got != 1 {
			t.Errorf("%d log lines about the changed source, want 1:\n%s", got, m.stderr)
		}
	}
}

// settleFollowed waits until a followed mount shows final (for a
// truncation: a shorter prefix of the records) in every record, the ones
// the kernel cached before the change included.
func settleFollowed(t *testing.T, dir string, mode changeMode, final [][]byte) {
	t.Helper()
	deadline := time.Now().Add(followWait)
	for {
		bad := ""
		names := recordNames(t, dir)
		want := len(final)
		switch {
		case mode.name == "truncate" && len(names) >= len(final):
			bad = fmt.Sprintf("%d records listed after truncation, want fewer than %d", len(names), len(final))
		case mode.name == "truncate":
			want = len(names)
		case len(names) != want:
			bad = fmt.Sprintf("%d records listed, want %d", len(names), want)
		}
		for i := 0; i < want && bad == ""; i++ {
			b, err := readRecordFile(dir, i)
			if err != nil || !bytes.Equal(b, final[i]) {
				bad = fmt.Sprintf("record %d: %d bytes %.24q, %v; want %.24q", i, len(b), b, err, final[i])
			}
		}
		if bad == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v after the change: %s (.recfs says %v records)", followWait, bad,
				infoLines(t, filepath.Join(dir, ".recfs"))["records"])
		}
		time.Sleep(50 * time.Millisecond)
	}
}
