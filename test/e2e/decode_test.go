package e2e

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/syndtr/goleveldb/leveldb"
)

// escapeField escapes as recfs --decode documents it, grep first:
// printable UTF-8 as itself (a space only in the last field of a line),
// the backslash as \\, every other byte as \xNN.
func escapeField(b []byte, last bool) string {
	var s strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch {
		case r == '\\':
			s.WriteString(`\\`)
		case r == ' ' && last || r != ' ' && r != utf8.RuneError && unicode.IsPrint(r):
			s.Write(b[:n])
		default:
			if r == utf8.RuneError {
				n = 1
			}
			for _, c := range b[:n] {
				fmt.Fprintf(&s, `\x%02x`, c)
			}
		}
		b = b[n:]
	}
	return s.String()
}

// onlyWAL returns the path of the one write-ahead log (*.log) in the
// database directory dir, failing t when there is not exactly one.
func onlyWAL(t *testing.T, dir string) string {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	if len(logs) != 1 {
		t.Fatalf("WALs in %s: %v, want one", dir, logs)
	}
	return logs[0]
}

// writeGoleveldbDB writes batches of puts and deletes with goleveldb into
// a new database and returns its directory and, per batch, the text
// --decode batch must show for it (sequence numbers start at 1 and advance
// by each batch's count).
func writeGoleveldbDB(t *testing.T, batches int) (string, []string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "db")
	db, err := leveldb.OpenFile(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(int64(batches)))
	var want []string
	seq := uint64(1)
	for b := 0; b < batches; b++ {
		var batch leveldb.Batch
		n := 1 + rng.Intn(5)
		text := fmt.Sprintf("batch seq %d count %d\n", seq, n)
		for i := 0; i < n; i++ {
			k := []byte(fmt.Sprintf("user%05d", rng.Intn(100000)))
			if rng.Intn(5) == 0 {
				k = append(k, 0, ' ', 0xfe, '\\')
			}
			hello := b == batches/2 && i == 0 // the one batch that says hello world
			if rng.Intn(4) == 0 && !hello {
				batch.Delete(k)
				text += "delete " + escapeField(k, true) + "\n"
				continue
			}
			v := []byte(fmt.Sprintf("value of batch %d\n\t%d", b, i))
			if hello {
				v = []byte("hello world")
			}
			batch.Put(k, v)
			text += "put " + escapeField(k, false) + " " + escapeField(v, true) + "\n"
		}
		if err := db.Write(&batch, nil); err != nil {
			t.Fatal(err)
		}
		want = append(want, text)
		seq += uint64(n)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, want
}

// TestDecodeMount mounts a goleveldb WAL with --decode batch on both
// backends: every record file reads as the text of the batch written, ls -l
// sizes are the sizes read, and grep finds a key in the records that hold
// it. A directory mount with --decode auto shows the WAL decoded as
// batches and the MANIFEST as VersionEdits.
func TestDecodeMount(t *testing.T) {
	needFUSE(t)
	dir, want := writeGoleveldbDB(t, 300)
	wal := onlyWAL(t, dir)
	eachBackend(t, func(t *testing.T, backend string) {
		mnt := newMountDir(t)
		startMount(t, wal, mnt, "--backend", backend, "--decode", "batch")
		ents, err := os.ReadDir(mnt)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range ents {
			if !strings.HasPrefix(e.Name(), ".") {
				names = append(names, e.Name())
			}
		}
		sort.Strings(names)
		if len(names) != len(want) {
			t.Fatalf("%d records listed, %d batches written", len(names), len(want))
		}
		holders := map[string]bool{}
		needle := ""
		for i, name := range names {
			p := filepath.Join(mnt, name)
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != want[i] {
				t.Fatalf("%s:\n%s\nwant:\n%s", name, got, want[i])
			}
			if fi.Size() != int64(len(got)) {
				t.Fatalf("%s: ls -l size %d, %d bytes read", name, fi.Size(), len(got))
			}
			if i == len(names)/2 {
				needle = strings.Fields(strings.Split(want[i], "\n")[1])[1]
			}
		}
		for i, text := range want {
			if strings.Contains(text, needle) {
				holders[names[i]] = true
			}
		}
		r := runCmd(t, "grep", "-rlF", "--", needle, mnt)
		var found []string
		for _, l := range strings.Fields(r.stdout) {
			found = append(found, filepath.Base(l))
		}
		if r.code != 0 || len(found) != len(holders) {
			t.Fatalf("grep -rl %q: %v (exit %d, %s); the batches holding it: %v", needle, found, r.code, r.stderr, holders)
		}
		for _, f := range found {
			if !holders[f] {
				t.Fatalf("grep found %q in %s, which does not hold it", needle, f)
			}
		}
		// A value with a space greps as it was written.
		hello := names[len(want)/2]
		if r := runCmd(t, "grep", "-rl", "hello world", mnt); r.code != 0 || strings.TrimSpace(r.stdout) != filepath.Join(mnt, hello) {
			t.Fatalf("grep -rl 'hello world': %q (exit %d, %s), want %s", r.stdout, r.code, r.stderr, hello)
		}

		// The directory, decoded by name.
		dmnt := newMountDir(t)
		startMount(t, dir, dmnt, "--backend", backend, "--decode", "auto")
		walDir := filepath.Join(dmnt, filepath.Base(wal))
		first, err := os.ReadFile(filepath.Join(walDir, names[0]))
		if err != nil || string(first) != want[0] {
			t.Fatalf("auto: %s/%s: %q, %v; want %q", walDir, names[0], first, err, want[0])
		}
		ms, _ := filepath.Glob(filepath.Join(dir, "MANIFEST-*"))
		if len(ms) != 1 {
			t.Fatalf("MANIFESTs %v", ms)
		}
		edit, err := os.ReadFile(filepath.Join(dmnt, filepath.Base(ms[0]), "0"))
		if err != nil || !strings.HasPrefix(string(edit), "comparator leveldb.BytewiseComparator\n") {
			t.Fatalf("auto: first VersionEdit of %s: %q, %v", filepath.Base(ms[0]), edit, err)
		}
	})
}
