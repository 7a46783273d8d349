package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	recfsldb "github.com/recfs/recfs/codec/leveldb"

	"github.com/syndtr/goleveldb/leveldb"
)

// followWait is how long a followed mount may take to show an append.
const followWait = 10 * time.Second

// recordNames lists the numbered record files of a mounted record directory.
func recordNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		if !strings.HasPrefix(e.Name(), ".") && e.Name() != "trailer" {
			out = append(out, e.Name())
		}
	}
	return out
}

// waitRecords waits until dir lists n records.
func waitRecords(t *testing.T, dir string, n int) {
	t.Helper()
	waitUntil(t, func() (bool, string) {
		got := len(recordNames(t, dir))
		return got == n, fmt.Sprintf("%s lists %d records, want %d", dir, got, n)
	})
}

// waitInfo waits until the .recfs file at path has the line "key: want".
func waitInfo(t *testing.T, path, key, want string) {
	t.Helper()
	waitUntil(t, func() (bool, string) {
		got := infoLines(t, path)[key]
		return slices.Contains(got, want), fmt.Sprintf("%s: %s %v, want %s", path, key, got, want)
	})
}

// waitUntil polls cond every 10 ms until it holds, and fails t with what
// cond last said once followWait has passed.
func waitUntil(t *testing.T, cond func() (ok bool, state string)) {
	t.Helper()
	waitFor(t, followWait, 10*time.Millisecond, cond)
}

func TestFollow(t *testing.T) {
	needFUSE(t)
	eachBackend(t, func(t *testing.T, backend string) {
		t.Run("external appender", func(t *testing.T) { followAppender(t, backend) })
		t.Run("goleveldb live log", func(t *testing.T) { followGoleveldb(t, backend) })
	})
}

// followAppender: another process (recfs append, i.e. the codec writer)
// grows the log; a record written halfway stays hidden until complete.
func followAppender(t *testing.T, backend string) {
	src := tempLog(t, "live.log", [][]byte{[]byte("first"), []byte("second"), []byte("third")})
	dir := newMountDir(t)
	startMount(t, src, dir, "--follow", "--follow-interval", "20ms", "--no-cache", "--backend", backend)
	if got := recordNames(t, dir); len(got) != 3 {
		t.Fatalf("initial listing %v", got)
	}
	// Looked up before it exists: the kernel may cache the miss.
	if _, err := os.Stat(filepath.Join(dir, "000003")); !errors.Is(err, syscall.ENOENT) {
		t.Fatalf("stat of a future record: %v", err)
	}
	in := filepath.Join(t.TempDir(), "in")
	os.WriteFile(in, []byte("user_17 fourth"), 0o644)
	if r := runRecfs(t, "append", src, in); r.code != 0 {
		t.Fatalf("recfs append: %d %s", r.code, r.stderr)
	}
	waitRecords(t, dir, 4)
	if b, err := os.ReadFile(filepath.Join(dir, "000003")); err != nil || string(b) != "user_17 fourth" {
		t.Fatalf("new record: %q %v", b, err)
	}
	if r := runCmd(t, "grep", "-rl", "user_17", dir); r.code != 0 || strings.TrimSpace(r.stdout) != filepath.Join(dir, "000003") {
		t.Fatalf("grep -r after append: %d %q", r.code, r.stdout)
	}
	if info := infoLines(t, filepath.Join(dir, ".recfs")); strings.Join(info["records"], "") != "4" {
		t.Fatalf(".recfs after append: %v", info["records"])
	}

	// A big record written in two halves is hidden until its last byte lands.
	fi, _ := os.Stat(src)
	var buf bytes.Buffer
	w := recfsldb.NewWriter(&buf, recfsldb.WriterOptions{Offset: fi.Size()})
	big := bytes.Repeat([]byte("0123456789abcdef"), 10000)
	w.WriteRecord(big)
	w.Close()
	f, err := os.OpenFile(src, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	half := buf.Len() / 2
	f.Write(buf.Bytes()[:half])
	// Following has read the half once .recfs shows the grown file size (a
	// refresh publishes it though no record was added): only then does the
	// listing show that the partial record stays hidden.
	waitInfo(t, filepath.Join(dir, ".recfs"), "file size", strconv.FormatInt(fi.Size()+int64(half), 10))
	if got := recordNames(t, dir); len(got) != 4 {
		t.Fatalf("half-written record listed: %v", got)
	}
	f.Write(buf.Bytes()[half:])
	waitRecords(t, dir, 5)
	if b, err := os.ReadFile(filepath.Join(dir, "000004")); err != nil || !bytes.Equal(b, big) {
		t.Fatalf("completed record: %d bytes, %v", len(b), err)
	}
	if info := infoLines(t, filepath.Join(dir, ".recfs")); len(info["damage"]) != 0 {
		t.Fatalf(".recfs still lists the torn tail: %v", info["damage"])
	}
}

// followGoleveldb mounts the live write-ahead log of an open goleveldb
// database and watches its writes appear.
func followGoleveldb(t *testing.T, backend string) {
	dbdir := t.TempDir()
	db, err := leveldb.OpenFile(dbdir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range 5 {
		if err := db.Put([]byte(fmt.Sprintf("key-%d", i)), []byte("value"), nil); err != nil {
			t.Fatal(err)
		}
	}
	dir := newMountDir(t)
	startMount(t, onlyWAL(t, dbdir), dir, "--follow", "--follow-interval", "20ms", "--no-cache", "--backend", backend)
	base := len(recordNames(t, dir))
	if base < 5 {
		t.Fatalf("live log lists %d records, want at least the 5 puts", base)
	}
	for i := range 3 {
		if err := db.Put([]byte(fmt.Sprintf("late-key-%d", i)), []byte("late value"), nil); err != nil {
			t.Fatal(err)
		}
	}
	waitRecords(t, dir, base+3)
	if r := runCmd(t, "grep", "-rl", "late-key-2", dir); r.code != 0 {
		t.Fatalf("grep for the last put: %d %q %q", r.code, r.stdout, r.stderr)
	}
}
