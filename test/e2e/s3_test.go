package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/recfs/recfs/codec/leveldb"
	"github.com/recfs/recfs/test/internal/vgw"
)

// startS3 starts an S3 server for the test and points recfs subprocesses
// at it (they inherit the environment).
func startS3(t *testing.T) *vgw.Server {
	t.Helper()
	srv := vgw.Start(t)
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	return srv
}

// putS3Log stores genS3Log(seed, n) as object key of srv and returns it.
func putS3Log(t *testing.T, srv *vgw.Server, key string, seed uint64, n int) []byte {
	t.Helper()
	data := genS3Log(t, seed, n)
	srv.Put(t, key, data)
	return data
}

// genS3Log writes a leveldb log of n random records (some spanning several
// 32 KiB blocks) and returns it.
func genS3Log(t *testing.T, seed uint64, n int) []byte {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	var buf bytes.Buffer
	w := leveldb.NewWriter(&buf, leveldb.WriterOptions{})
	for i := range n {
		l := rng.IntN(20000)
		if i%50 == 7 {
			l = 100000 + rng.IntN(50000)
		}
		p := make([]byte, l)
		for j := range p {
			p[j] = byte(rng.Uint32())
		}
		if _, err := w.WriteRecord(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// compareTrees checks that every entry of the local mount has a twin with
// the same bytes in the s3 mount, and that the listings match (.recfs,
// which names the source, aside).
func compareTrees(t *testing.T, local, remote string) int {
	t.Helper()
	count := 0
	err := filepath.WalkDir(local, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(local, p)
		if d.Name() == ".recfs" {
			return nil
		}
		twin := filepath.Join(remote, rel)
		if d.IsDir() {
			a, err1 := os.ReadDir(p)
			b, err2 := os.ReadDir(twin)
			if err1 != nil || err2 != nil || len(a) != len(b) {
				t.Errorf("%s: listing %d/%v vs %d/%v", rel, len(a), err1, len(b), err2)
			}
			return nil
		}
		want, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		got, err := os.ReadFile(twin)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: s3 mount gives %d bytes (%v), local %d", rel, len(got), err, len(want))
		}
		count++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return count
}

// TestS3Mount mounts objects over s3:// on both backends and compares every
// record with a local mount of the same file; an s3 mount is read-only.
func TestS3Mount(t *testing.T) {
	needFUSE(t)
	srv := startS3(t)
	dir := t.TempDir()
	gen := filepath.Join(dir, "gen.log")
	if err := os.WriteFile(gen, genS3Log(t, 1, 600), 0o644); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"gen.log":           gen,
		"many-small.log":    filepath.Join(vectors, "leveldb/many-small-10000.log"),
		"large-items.rio":   filepath.Join(vectors, "grailbio/large-items.rio"),
		"legacy.grail-rpk":  filepath.Join(vectors, "grailbio/legacy-packed.grail-rpk"),
		"trailer-json.rio":  filepath.Join(vectors, "grailbio/trailer-json.rio"),
		"appengine-7.log":   filepath.Join(vectors, "leveldb/appengine-padded-seven.log"),
		"pebble-recycl.log": filepath.Join(vectors, "leveldb/pebble-recyclable.log"),
	}
	for key, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		srv.Put(t, key, b)
	}
	eachBackend(t, func(t *testing.T, backend string) {
		for key, path := range files {
			lm, rm := newMountDir(t), newMountDir(t)
			startMount(t, path, lm, "--backend", backend)
			startMount(t, vgw.URL(key), rm, "--backend", backend)
			if n := compareTrees(t, lm, rm); n == 0 {
				t.Errorf("%s: no records compared", key)
			}
			if backend == "gofuse" && key == "gen.log" {
				_, err := os.Create(filepath.Join(rm, "new"))
				if !errors.Is(err, syscall.EROFS) {
					t.Errorf("create on an s3 mount: %v, want EROFS", err)
				}
				if err := os.Mkdir(filepath.Join(rm, "d"), 0o755); !errors.Is(err, syscall.EROFS) {
					t.Errorf("mkdir on an s3 mount: %v, want EROFS", err)
				}
			}
		}
	})
}

// TestS3Overwrite overwrites an object under its mount: reads that reach the
// store after the change fail with EIO (never bytes of the new version), and a new
// mount serves the new version.
func TestS3Overwrite(t *testing.T) {
	needFUSE(t)
	srv := startS3(t)
	oldLog, newLog := genS3Log(t, 2, 600), genS3Log(t, 3, 600)
	srv.Put(t, "w.log", oldLog)
	eachBackend(t, func(t *testing.T, backend string) {
		srv.Put(t, "w.log", oldLog)
		mnt := newMountDir(t)
		// A cache smaller than the object: the build's sequential scan
		// does not leave the middle of it in memory.
		m := startMount(t, vgw.URL("w.log"), mnt, "--backend", backend, "--no-cache", "--s3-cache", "2M")
		recs := recordNames(t, mnt)
		if len(recs) < 600 {
			t.Fatalf("%d records listed", len(recs))
		}
		if _, err := os.ReadFile(filepath.Join(mnt, recs[0])); err != nil {
			t.Fatal(err)
		}
		srv.Put(t, "w.log", newLog)
		_, err := os.ReadFile(filepath.Join(mnt, recs[len(recs)/2]))
		if !errors.Is(err, syscall.EIO) {
			t.Fatalf("read after overwrite: %v, want EIO", err)
		}
		// The server's stderr reaches the test through a pipe, copied
		// as it comes: the line may follow the EIO by a moment.
		const changed = "object changed since it was opened"
		for deadline := time.Now().Add(5 * time.Second); !strings.Contains(m.stderr.String(), changed) && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		if n := strings.Count(m.stderr.String(), changed); n != 1 {
			t.Errorf("%d log lines about the change, want 1:\n%s", n, m.stderr)
		}
		local := writeTemp(t, "new.log", newLog)
		lm, rm := newMountDir(t), newMountDir(t)
		startMount(t, local, lm, "--backend", backend)
		startMount(t, vgw.URL("w.log"), rm, "--backend", backend)
		if n := compareTrees(t, lm, rm); n < 600 {
			t.Errorf("remount compared %d records", n)
		}
	})
}

// TestS3Commands runs info, ls, cat, verify and index on s3:// URLs: the
// same records as for the local file. With the index cached, ls costs one
// HEAD; a cat of one record costs one HEAD and block-aligned GETs that
// fetch no block twice — the saved table is a hint, so the record's number
// is proven by reading the object up to it (README "Saved indexes are
// hints"), never more than once.
func TestS3Commands(t *testing.T) {
	needBinary(t)
	srv := startS3(t)
	rec := srv.Recorder(t)
	local := filepath.Join(t.TempDir(), "gen.log")
	data := genS3Log(t, 4, 900)
	if err := os.WriteFile(local, data, 0o644); err != nil {
		t.Fatal(err)
	}
	srv.Put(t, "cmd/gen.log", data)
	url := vgw.URL("cmd/gen.log")
	for _, args := range [][]string{
		{"ls"}, {"cat", "0", "5-9", "last:3"}, {"verify"}, {"info", "--json"},
	} {
		a := runRecfs(t, append([]string{args[0], local}, args[1:]...)...)
		b := runRecfs(t, append([]string{args[0], url}, args[1:]...)...)
		if a.code != 0 || b.code != a.code {
			t.Errorf("%v: local %d %s, s3 %d %s", args, a.code, a.stderr, b.code, b.stderr)
			continue
		}
		if args[0] == "info" {
			var la, lb map[string]any
			if json.Unmarshal([]byte(a.stdout), &la) != nil || json.Unmarshal([]byte(b.stdout), &lb) != nil {
				t.Fatalf("info --json: %s / %s", a.stdout, b.stdout)
			}
			for _, k := range []string{"records", "format", "flavor", "size", "payload_bytes", "damage"} {
				if fmt.Sprint(la[k]) != fmt.Sprint(lb[k]) || la[k] == nil {
					t.Errorf("info %s: s3 %v, local %v", k, lb[k], la[k])
				}
			}
			continue
		}
		if strings.ReplaceAll(b.stdout, url, local) != a.stdout {
			t.Errorf("%v: s3 output differs from local:\n%.500s\nvs\n%.500s", args, b.stdout, a.stdout)
		}
	}
	// Saved indexes are keyed by endpoint, bucket, key and ETag: index the
	// object as the proxy's clients name it.
	if r := runRecfs(t, "index", "--s3-endpoint", rec.Endpoint, url); r.code != 0 {
		t.Fatalf("index: %d %s", r.code, r.stderr)
	}
	// Record 450: where is it?
	ls := runRecfs(t, "ls", local, "450")
	f := strings.Fields(ls.stdout)
	if len(f) != 3 {
		t.Fatalf("ls: %q", ls.stdout)
	}
	off, length := atoi(t, f[1]), atoi(t, f[2])
	// With the index saved, ls costs one HEAD and no GET.
	rec.Take()
	if r := runRecfs(t, "ls", "--s3-endpoint", rec.Endpoint, url); r.code != 0 || strings.Count(r.stdout, "\n") != 900 {
		t.Fatalf("ls via s3: %d %s", r.code, r.stderr)
	}
	if q := rec.Take(); len(q) != 1 || q[0].Method != "HEAD" {
		t.Errorf("ls with a saved index made %v, want one HEAD", q)
	}
	end := off + length + 7*(length/32768+2) // leveldb framing: a 7-byte header a chunk
	rec.Take()
	r := runRecfs(t, "cat", "--s3-endpoint", rec.Endpoint, url, "450")
	want := runRecfs(t, "cat", local, "450")
	if r.code != 0 || r.stdout != want.stdout {
		t.Fatalf("cat via s3: %d %s", r.code, r.stderr)
	}
	heads, fetched := 0, map[int]int{}
	for _, q := range rec.Take() {
		switch q.Method {
		case "HEAD":
			heads++
		case "GET":
			lo, hi, ok := strings.Cut(strings.TrimPrefix(q.Range, "bytes="), "-")
			if !ok {
				t.Errorf("GET %s without a range", q.Path)
				continue
			}
			a, b := atoi(t, lo), atoi(t, hi)
			if a%(1<<20) != 0 {
				t.Errorf("GET range %s not block-aligned", q.Range)
			}
			for blk := a >> 20; blk <= b>>20; blk++ {
				fetched[blk]++
			}
		default:
			t.Errorf("unexpected %s %s", q.Method, q.Path)
		}
	}
	if heads != 1 {
		t.Errorf("%d HEADs, want 1", heads)
	}
	for blk, n := range fetched {
		if n > 1 {
			t.Errorf("fetched block %d %d times", blk, n)
		}
	}
	for blk := 0; blk <= min(end, len(data)-1)>>20; blk++ {
		if fetched[blk] == 0 {
			t.Errorf("block %d was not read: record 450 (blocks %d-%d) served unproven", blk, off>>20, end>>20)
		}
	}
	if len(fetched) == 0 {
		t.Error("no GETs")
	}
	t.Logf("cat of record 450 (%d bytes at %d): %d HEAD, blocks %v", length, off, heads, fetched)
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return n
}

// TestS3MountRequests: with the index saved, mount + ls of an object costs
// one HEAD and no GET, and reading one record costs ranged GETs that fetch
// no byte twice: the saved table is a hint, so the record's number is
// proven by reading the object up to it (README "Saved indexes are
// hints").
func TestS3MountRequests(t *testing.T) {
	needFUSE(t)
	srv := startS3(t)
	rec := srv.Recorder(t)
	putS3Log(t, srv, "m.log", 5, 900)
	if r := runRecfs(t, "index", "--s3-endpoint", rec.Endpoint, vgw.URL("m.log")); r.code != 0 {
		t.Fatalf("index: %d %s", r.code, r.stderr)
	}
	mnt := newMountDir(t)
	rec.Take()
	startMount(t, vgw.URL("m.log"), mnt, "--s3-endpoint", rec.Endpoint)
	ents, err := os.ReadDir(mnt)
	if err != nil || len(ents) < 900 {
		t.Fatalf("ls: %d entries, %v", len(ents), err)
	}
	if q := rec.Take(); len(q) != 1 || q[0].Method != "HEAD" {
		t.Errorf("mount + ls with a saved index made %v, want one HEAD", q)
	}
	b, err := os.ReadFile(filepath.Join(mnt, ents[len(ents)/2].Name()))
	if err != nil {
		t.Fatal(err)
	}
	q := rec.Take()
	if len(q) == 0 {
		t.Errorf("reading one %d-byte record made no request", len(b))
	}
	seen := map[string]bool{}
	for _, r := range q {
		if r.Method != "GET" || r.Range == "" || seen[r.Range] {
			t.Errorf("reading one %d-byte record made %v: %v unexpected or repeated", len(b), q, r)
		}
		seen[r.Range] = true
	}
}

// TestS3Sidecar: `recfs index --publish` uploads the saved index next to
// the object; a machine without a saved index of its own uses it (one HEAD
// and one GET before ls, mounted or not), and a stale one (the object was
// overwritten) is ignored for a fresh scan.
func TestS3Sidecar(t *testing.T) {
	needFUSE(t)
	srv := startS3(t)
	rec := srv.Recorder(t)
	putS3Log(t, srv, "side.log", 6, 700)
	url := vgw.URL("side.log")
	if r := runRecfs(t, "index", "--publish", url); r.code != 0 || !strings.Contains(r.stdout, "side.log.recfs-idx") {
		t.Fatalf("index --publish: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := runRecfs(t, "index", "--publish", filepath.Join(vectors, "leveldb/large-1mib.log")); r.code != 2 {
		t.Errorf("--publish of a local file: %d %s", r.code, r.stderr)
	}
	info := func() map[string]any {
		t.Helper()
		r := runRecfs(t, "info", "--json", "--s3-endpoint", rec.Endpoint, url)
		var m map[string]any
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &m) != nil {
			t.Fatalf("info: %d %s %s", r.code, r.stdout, r.stderr)
		}
		return m
	}
	// Another machine: a fresh cache directory.
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	rec.Take()
	if m := info(); m["index_source"] != "cached" || fmt.Sprint(m["records"]) != "700" {
		t.Errorf("info with a published index: %v records, index %v", m["records"], m["index_source"])
	}
	q := rec.Take()
	if len(q) != 2 || q[0].Method != "HEAD" || q[1].Method != "GET" || !strings.HasSuffix(q[1].Path, ".recfs-idx") {
		t.Errorf("opening with a published index made %v, want HEAD + GET of the sidecar", q)
	}
	// A mount elsewhere: one HEAD and one GET until ls answers.
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	mnt := newMountDir(t)
	startMount(t, url, mnt, "--s3-endpoint", rec.Endpoint)
	ents, err := os.ReadDir(mnt)
	if err != nil || len(ents) < 700 {
		t.Fatalf("ls: %d, %v", len(ents), err)
	}
	if q := rec.Take(); len(q) != 2 || q[0].Method != "HEAD" || q[1].Method != "GET" {
		t.Errorf("mount + ls with a published index made %v", q)
	}
	// The object changes; its sidecar is now stale and must not be used.
	srv.Put(t, "side.log", genS3Log(t, 7, 650))
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	if m := info(); m["index_source"] != "built" || fmt.Sprint(m["records"]) != "650" {
		t.Errorf("info with a stale published index: %v records, index %v", m["records"], m["index_source"])
	}
}
