package e2e

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/recfs/recfs/codec/tfrecord"
	"github.com/recfs/recfs/test/internal/vgw"
)

// gzShard is a TFRecord shard: its records, the plain file and the file
// compressed by the gzip program (in three members, as shards concatenated
// by tools are).
type gzShard struct {
	recs    [][]byte
	plain   []byte
	z       []byte
	members []int // compressed offsets of the members
}

// makeGzShard returns a shard of n records of base64 text (up to maxLen
// bytes each, compressing about 1.3-fold), every record holding "needle"
// when i%97 == 5.
func makeGzShard(t *testing.T, n, maxLen int, seed uint64) gzShard {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 22))
	var s gzShard
	raw := make([]byte, maxLen)
	for i := range n {
		for j := range raw {
			raw[j] = byte(rng.Uint32())
		}
		r := []byte(fmt.Sprintf("record %d ", i))
		if i%97 == 5 {
			r = append(r, "needle "...)
		}
		r = append(r, base64.StdEncoding.EncodeToString(raw[:rng.IntN(maxLen*3/4)])...)
		s.recs = append(s.recs, r)
		s.plain = tfrecord.AppendRecord(s.plain, r)
	}
	third := len(s.plain) / 3
	for _, part := range [][]byte{s.plain[:third], s.plain[third : 2*third], s.plain[2*third:]} {
		s.members = append(s.members, len(s.z))
		s.z = append(s.z, gzipProgram(t, part)...)
	}
	return s
}

// gzipProgram compresses b with the gzip program.
func gzipProgram(t *testing.T, b []byte) []byte {
	t.Helper()
	c := exec.Command("gzip", "-c", "-6")
	c.Stdin = bytes.NewReader(b)
	out, err := c.Output()
	if err != nil {
		t.Fatalf("gzip: %v", err)
	}
	return out
}

// indexedGzShard writes makeGzShard's shard to a file and indexes it into
// a new cache directory.
func indexedGzShard(t *testing.T, n, maxLen int, seed uint64) (gzShard, string, string) {
	t.Helper()
	s := makeGzShard(t, n, maxLen, seed)
	path := writeTemp(t, "shard.tfrecord.gz", s.z)
	cache := t.TempDir()
	if r := runRecfs(t, "index", "--cache-dir", cache, path); r.code != 0 {
		t.Fatalf("index: %d %s", r.code, r.stderr)
	}
	return s, path, cache
}

// TestTFRecordGzipCat: a gzipped shard is indexed once and then read with
// its saved index: record 0, the last record and one in the middle come
// out right with the index loaded from the cache. Zero padding after the
// last member is no damage; a shard cut short keeps every record before
// the cut and says what was cut; a damaged middle member keeps the records
// of the members around it.
func TestTFRecordGzipCat(t *testing.T) {
	t.Parallel()
	s, path, cache := indexedGzShard(t, 2000, 6000, 1)
	if r := runRecfs(t, "info", "--cache-dir", cache, path); r.code != 0 || !strings.Contains(r.stdout, "records:  2000") || !strings.Contains(r.stdout, "index:    cached") {
		t.Fatalf("info with the saved index: %d %s %s", r.code, r.stdout, r.stderr)
	}
	for _, sel := range []string{"0", "last:1", "1234"} {
		want := s.recs[len(s.recs)-1]
		if n, err := strconv.Atoi(sel); err == nil {
			want = s.recs[n]
		}
		if r := runRecfs(t, "cat", "--cache-dir", cache, path, sel); r.code != 0 || r.stdout != string(want) {
			t.Fatalf("cat %s: %d, %d bytes (want %d) %s", sel, r.code, len(r.stdout), len(want), r.stderr)
		}
	}
	// Many records in shuffled order: read ahead on every core
	// (index.Table.ReadAhead), written in the order asked for.
	args := []string{"cat", "--number", "--cache-dir", cache, path}
	var want strings.Builder
	for _, n := range rand.New(rand.NewPCG(3, 4)).Perm(len(s.recs))[:300] {
		args = append(args, strconv.Itoa(n))
		fmt.Fprintf(&want, "%06d\t%s\n", n, s.recs[n])
	}
	if r := runRecfs(t, args...); r.code != 0 || r.stdout != want.String() {
		t.Fatalf("cat of 300 shuffled records: %d, %d bytes (want %d) %s", r.code, len(r.stdout), want.Len(), r.stderr)
	}
	all := string(bytes.Join(s.recs, nil))

	padded := writeTemp(t, "padded.tfrecord.gz", append(bytes.Clone(s.z), make([]byte, 10000)...))
	if r := runRecfs(t, "cat", "--no-cache", padded); r.code != 0 || r.stdout != all || r.stderr != "" {
		t.Fatalf("cat of a zero-padded shard: %d, %d bytes of %d, %s", r.code, len(r.stdout), len(all), r.stderr)
	}
	if r := runRecfs(t, "info", "--no-cache", padded); r.code != 0 || !strings.Contains(r.stdout, "damage:   none") {
		t.Fatalf("info of a zero-padded shard: %d %s %s", r.code, r.stdout, r.stderr)
	}

	cut := writeTemp(t, "cut.tfrecord.gz", s.z[:len(s.z)-len(s.z)/5])
	r := runRecfs(t, "info", "--json", "--no-cache", cut)
	n := jsonRecords(t, r)
	if r.code != 0 || n < 1000 || n >= len(s.recs) || !strings.Contains(r.stdout, "cut short") {
		t.Fatalf("info of a cut shard: %d, %d records, %s %s", r.code, n, r.stdout, r.stderr)
	}
	if r := runRecfs(t, "cat", "--no-cache", cut, fmt.Sprintf("0-%d", n-1)); r.code != 0 || r.stdout != string(bytes.Join(s.recs[:n], nil)) {
		t.Fatalf("cat of the records before the cut: %d %s", r.code, r.stderr)
	}

	damaged := bytes.Clone(s.z)
	for i := s.members[1] + 20000; i < s.members[1]+20100; i++ {
		damaged[i] ^= 0x5a
	}
	dpath := writeTemp(t, "damaged.tfrecord.gz", damaged)
	r = runRecfs(t, "info", "--json", "--no-cache", dpath)
	if n := jsonRecords(t, r); r.code != 0 || n < len(s.recs)/2 || n >= len(s.recs) {
		t.Fatalf("info of a shard with a damaged member: %d, %d records %s", r.code, n, r.stderr)
	}
	for _, sel := range []string{"0", "last:1"} {
		want := s.recs[0]
		if sel != "0" {
			want = s.recs[len(s.recs)-1]
		}
		if r := runRecfs(t, "cat", "--no-cache", dpath, sel); r.code != 0 || r.stdout != string(want) {
			t.Fatalf("cat %s of a shard with a damaged member: %d %s", sel, r.code, r.stderr)
		}
	}
}

// TestTFRecordGzipSavedWindows: the saved index of a gzipped shard keeps
// its checkpoint windows after the part a command loads (the cache file's
// blob region, each window checked against a SHA-256 the sealed part
// holds), so a one-record cat loads little and reads the record
// byte-exact; a window changed in the cache file is refused when a read
// starts from it: the saved table is dropped and the shard scanned afresh
// (a log line), every record still reads right, and the table saved in its
// place serves the next command.
func TestTFRecordGzipSavedWindows(t *testing.T) {
	t.Parallel()
	s, path, cache := indexedGzShard(t, 2000, 6000, 5)
	idx, _ := filepath.Glob(filepath.Join(cache, "*.idx"))
	if len(idx) != 1 {
		t.Fatalf("saved tables: %v", idx)
	}
	b, err := os.ReadFile(idx[0])
	if err != nil {
		t.Fatal(err)
	}
	// body | checksum | seal | windows | windows' length (u64) | seal's length (u8)
	blob := int(binary.LittleEndian.Uint64(b[len(b)-9:]))
	if blob <= 0 || blob >= len(b)/2 {
		t.Fatalf("%d bytes of windows in a %d-byte saved table", blob, len(b))
	}
	last := len(s.recs) - 1
	for _, n := range []int{0, last, 777} {
		if r := runRecfs(t, "cat", "--cache-dir", cache, path, strconv.Itoa(n)); r.code != 0 || r.stdout != string(s.recs[n]) {
			t.Fatalf("cat %d with the saved index: %d, %d bytes (want %d) %s", n, r.code, len(r.stdout), len(s.recs[n]), r.stderr)
		}
	}

	b[len(b)-9-blob/2] ^= 0x20 // a byte of a window in the middle
	if err := os.WriteFile(idx[0], b, 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runRecfs(t, "info", "--cache-dir", cache, path); r.code != 0 || !strings.Contains(r.stdout, "index:    cached") {
		t.Fatalf("info with a window changed: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := runRecfs(t, "cat", "--cache-dir", cache, path, "0"); r.code != 0 || r.stdout != string(s.recs[0]) {
		t.Fatalf("cat 0 (no window) with a window changed: %d %s", r.code, r.stderr)
	}
	// Backwards, so that every span's read starts at its checkpoint.
	args := []string{"cat", "--cache-dir", cache, path}
	var want []byte
	for n := last; n >= 0; n-- {
		args = append(args, strconv.Itoa(n))
		want = append(want, s.recs[n]...)
	}
	r := runRecfs(t, args...)
	if r.code != 0 || r.stdout != string(want) || !strings.Contains(r.stderr, "does not match") {
		t.Fatalf("cat of every record with a window changed: exit %d, %d bytes (want %d, a prefix of the records: %v), %s",
			r.code, len(r.stdout), len(want), bytes.HasPrefix(want, []byte(r.stdout)), r.stderr)
	}
	t.Logf("changed window met, table rebuilt: %s", strings.TrimSpace(r.stderr))
	if fixed, err := os.ReadFile(idx[0]); err != nil || bytes.Equal(fixed, b) {
		t.Fatalf("the saved table with the changed window is still there (%v)", err)
	}
	r = runRecfs(t, args...)
	if r.code != 0 || r.stdout != string(want) || r.stderr != "" {
		t.Fatalf("cat of every record after the rebuild: exit %d, %d bytes (want %d), %s", r.code, len(r.stdout), len(want), r.stderr)
	}
}

// jsonRecords returns the record count of `info --json` output.
func jsonRecords(t *testing.T, r result) int {
	t.Helper()
	i := strings.Index(r.stdout, `"records": `)
	if i < 0 {
		return -1
	}
	rest := r.stdout[i+len(`"records": `):]
	n, _ := strconv.Atoi(rest[:strings.IndexAny(rest, ",\n")])
	return n
}

// TestTFRecordGzipMountReads mounts a gzipped shard (zero padding after
// it) on both backends and reads it the ways users do: the last record
// first, grep -r over every record, and readers in parallel in random
// order.
func TestTFRecordGzipMountReads(t *testing.T) {
	needFUSE(t)
	s := makeGzShard(t, 1500, 6000, 2)
	eachBackend(t, func(t *testing.T, backend string) {
		src := writeTemp(t, "shard.tfrecord.gz", append(bytes.Clone(s.z), make([]byte, 512)...))
		mnt := newMountDir(t)
		startMount(t, src, mnt, "--no-cache", "--backend", backend)
		names := recordNames(t, mnt)
		if len(names) != len(s.recs) {
			t.Fatalf("%d record files, want %d", len(names), len(s.recs))
		}
		last := len(names) - 1
		if b, err := os.ReadFile(filepath.Join(mnt, names[last])); err != nil || !bytes.Equal(b, s.recs[last]) {
			t.Fatalf("last record: %v", err)
		}
		r := runCmd(t, "grep", "-rlc", "needle", mnt)
		if want := (len(s.recs) + 91) / 97; r.code != 0 || strings.Count(r.stdout, "\n") != want {
			t.Fatalf("grep -rl needle: %d, %d files (want %d) %s", r.code, strings.Count(r.stdout, "\n"), want, r.stderr)
		}
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(g), 3))
				for range 100 {
					i := rng.IntN(len(names))
					if b, err := os.ReadFile(filepath.Join(mnt, names[i])); err != nil || !bytes.Equal(b, s.recs[i]) {
						t.Errorf("record %s: %v", names[i], err)
						return
					}
				}
			}()
		}
		wg.Wait()
	})
}

// TestTFRecordGzipFollow: a gzipped shard still being written (its writer
// flushing as it goes) is mounted with --follow: the records written after
// the mount appear, and read back, on both backends.
func TestTFRecordGzipFollow(t *testing.T) {
	needFUSE(t)
	s := makeGzShard(t, 600, 3000, 3)
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	var flushed []int // compressed length after each flush
	for i, r := range s.recs {
		zw.Write(tfrecord.AppendRecord(nil, r))
		if i%100 == 99 {
			zw.Flush()
			flushed = append(flushed, z.Len())
		}
	}
	zw.Close()
	eachBackend(t, func(t *testing.T, backend string) {
		src := writeTemp(t, "live.tfrecord.gz", z.Bytes()[:flushed[1]])
		mnt := newMountDir(t)
		startMount(t, src, mnt, "--follow", "--follow-interval", "20ms", "--no-cache", "--backend", backend)
		waitRecords(t, mnt, 200)
		f, err := os.OpenFile(src, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		f.Write(z.Bytes()[flushed[1]:flushed[3]])
		waitRecords(t, mnt, 400)
		f.Write(z.Bytes()[flushed[3]:])
		waitRecords(t, mnt, len(s.recs))
		names := recordNames(t, mnt)
		for _, i := range []int{0, 399, 400, len(s.recs) - 1} {
			if b, err := os.ReadFile(filepath.Join(mnt, names[i])); err != nil || !bytes.Equal(b, s.recs[i]) {
				t.Fatalf("record %d after growth: %v", i, err)
			}
		}
	})
}

// bigGzShard writes a gzipped TFRecord file of n records of 1 MiB zeros
// (one member each, about 1 KiB): n GiB to decompress, made in an instant.
func bigGzShard(t *testing.T, n int) string {
	t.Helper()
	member := gzipProgram(t, tfrecord.AppendRecord(nil, make([]byte, 1<<20)))
	return writeTemp(t, "big.tfrecord.gz", bytes.Repeat(member, n))
}

// waitBusy waits, with a bound, until process pid has used 300 ms of CPU:
// it is indexing (the file is mapped, so its reads are not syscalls).
func waitBusy(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(mountTimeout)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:])); err == nil && len(f) > 13 {
			utime, _ := strconv.Atoi(f[11])
			stime, _ := strconv.Atoi(f[12])
			if utime+stime >= 30 { // clock ticks of 10 ms
				return
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("process %d did not get busy", pid)
}

// interruptBound is how soon an interrupted build must have ended. Its
// target is 0.5 s; the bound leaves room for a loaded machine, far below
// the minutes the whole build takes.
const interruptBound = 2 * time.Second

// TestTFRecordGzipInterrupt: SIGINT to `recfs index` and SIGTERM to `recfs
// mount` while they index a compressed shard (32 GiB to decompress) end
// them at once, saying "interrupted" once; nothing is mounted.
func TestTFRecordGzipInterrupt(t *testing.T) {
	src := bigGzShard(t, 32<<10)
	cache := t.TempDir()
	t.Run("index", func(t *testing.T) {
		c := exec.Command(bin, "index", "--cache-dir", cache, src)
		interruptDuring(t, c, os.Interrupt)
	})
	t.Run("mount", func(t *testing.T) {
		needFUSE(t)
		mnt := newMountDir(t)
		detachAtCleanup(t, mnt)
		c := exec.Command(bin, "mount", "--cache-dir", cache, src, mnt)
		interruptDuring(t, c, syscall.SIGTERM)
		if m := mountedAt(mnt); m != "" {
			t.Errorf("%s mounted at %s after the interrupted start", m, mnt)
		}
	})
}

// interruptDuring starts c, signals it once it reads, and checks it ends
// within interruptBound, failing, with "interrupted" said once.
func interruptDuring(t *testing.T, c *exec.Cmd, sig os.Signal) {
	t.Helper()
	stderr, done := startWatched(t, c)
	defer func() {
		c.Process.Kill()
		<-done
	}()
	waitBusy(t, c.Process.Pid)
	start := time.Now()
	if err := c.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-done:
		done <- err
	case <-time.After(interruptBound):
		t.Fatalf("%v: still running %v after %v; stderr %q", c.Args[:2], interruptBound, sig, stderr.String())
	}
	took := time.Since(start)
	if c.ProcessState.ExitCode() <= 0 || strings.Count(stderr.String(), "interrupted") != 1 {
		t.Fatalf("%v after %v: %v, stderr %q", c.Args[:2], sig, err, stderr.String())
	}
	t.Logf("%v ended %v after %v", c.Args[:2], took.Round(time.Millisecond), sig)
}

// TestS3TFRecordGzip: a gzipped shard in a store is indexed with its
// bytes fetched once (whatever --s3-cache is); with the index published
// next to it, a fresh machine uses the sidecar, and reads the last record
// once the sidecar's records are proven: one more pass over the object,
// never more (a published index is a hint: index/proof.go).
func TestS3TFRecordGzip(t *testing.T) {
	srv := startS3(t)
	rec := srv.Recorder(t)
	s := makeGzShard(t, 3000, 6000, 4)
	srv.Put(t, "shard.tfrecord.gz", s.z)
	url := vgw.URL("shard.tfrecord.gz")
	getBytes := func(q []vgw.Request, skip string) (n int64) {
		for _, r := range q {
			if r.Method == "GET" && (skip == "" || !strings.HasSuffix(r.Path, skip)) {
				n += r.Bytes
			}
		}
		return n
	}
	rec.Take()
	r := runRecfs(t, "info", "--json", "--no-cache", "--s3-cache", "4M", "--s3-endpoint", rec.Endpoint, url)
	if n := jsonRecords(t, r); r.code != 0 || n != len(s.recs) {
		t.Fatalf("info: %d, %d records %s", r.code, n, r.stderr)
	}
	got, limit := getBytes(rec.Take(), ""), int64(len(s.z))*105/100
	if got > limit {
		t.Errorf("indexing a %d-byte object fetched %d bytes, want at most %d", len(s.z), got, limit)
	}
	t.Logf("indexing a %d-byte object with --s3-cache 4M fetched %d bytes", len(s.z), got)
	if r := runRecfs(t, "index", "--publish", url); r.code != 0 {
		t.Fatalf("index --publish: %d %s", r.code, r.stderr)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // another machine
	rec.Take()
	r = runRecfs(t, "cat", "--s3-endpoint", rec.Endpoint, url, "last:1")
	if r.code != 0 || r.stdout != string(s.recs[len(s.recs)-1]) {
		t.Fatalf("cat last:1 with the published index: %d %s", r.code, r.stderr)
	}
	q := rec.Take()
	if got := getBytes(q, ""); got == getBytes(q, ".recfs-idx") {
		t.Errorf("the published index was not fetched: %v", q)
	}
	if got := getBytes(q, ".recfs-idx"); got > limit+int64(len(s.z))/2 {
		t.Errorf("reading the last record with the published index fetched %d bytes of the %d-byte object, want at most %d", got, len(s.z), limit+int64(len(s.z))/2)
	}
	t.Logf("cat of the last record with the published index: %d bytes of the object, %d of the sidecar", getBytes(q, ".recfs-idx"), getBytes(q, "")-getBytes(q, ".recfs-idx"))
}
