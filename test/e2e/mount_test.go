package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"

	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/codectest/recfile"

	"github.com/recfs/recfs/codec/recordio"

	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// genRecords makes n pseudo-random records of 1..maxLen bytes of printable
// text; record i contains the marker "<rec-i>" so grep can find it.
func genRecords(seed int64, n, maxLen int) [][]byte {
	rng := rand.New(rand.NewSource(seed))
	out := make([][]byte, n)
	const alphabet = "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	for i := range out {
		marker := fmt.Sprintf("<rec-%d>", i)
		l := len(marker) + rng.Intn(maxLen)
		b := make([]byte, l)
		for j := range b {
			b[j] = alphabet[rng.Intn(len(alphabet))]
		}
		copy(b[rng.Intn(l-len(marker)+1):], marker)
		out[i] = b
	}
	return out
}

// tempLog writes recs as a leveldb log named name in a new temporary
// directory and returns its path.
func tempLog(t *testing.T, name string, recs [][]byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	recfile.WriteLog(t, p, recs)
	return p
}

// writeTemp writes b (mode 0644) to a file named name in a new temporary
// directory and returns its path.
func writeTemp(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	recfile.WriteFile(t, p, b)
	return p
}

// writeRio writes recs as a grailbio recordio file with an optional trailer.
func writeRio(t *testing.T, path string, recs [][]byte, trailer []byte) {
	t.Helper()
	recfile.WriteFile(t, path, recfile.RIOBytes(t, recs, recordio.WriterOptions{Trailer: trailer != nil}, trailer))
}

// TestShellTools uses ls, cat and grep on a mounted log of 1500 records.
func TestShellTools(t *testing.T) {
	needFUSE(t)
	recs := genRecords(1, 1500, 300)
	src := tempLog(t, "events.log", recs)
	mnt := newMountDir(t)
	startMount(t, src, mnt, "--no-cache")

	// ls -l: one line per record, in order, with the exact sizes.
	r := runCmd(t, "ls", "-l", mnt)
	if r.code != 0 {
		t.Fatalf("ls -l: %d %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")[1:] // skip "total"
	if len(lines) != len(recs) {
		t.Fatalf("ls -l lists %d entries, want %d", len(lines), len(recs))
	}
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) < 9 || f[0] != "-r--r--r--" || f[4] != strconv.Itoa(len(recs[i])) || f[8] != fmt.Sprintf("%06d", i) {
			t.Fatalf("ls -l line %d: %q (want size %d)", i, l, len(recs[i]))
		}
	}

	// cat MNT/*: the records concatenated in order.
	r = runCmd(t, "sh", "-c", "cat "+mnt+"/*")
	if r.code != 0 || r.stdout != string(bytes.Join(recs, nil)) {
		t.Fatalf("cat MNT/*: exit %d, %d bytes, want %d", r.code, len(r.stdout), len(bytes.Join(recs, nil)))
	}
	// Unpadded lookups.
	for _, n := range []int{0, 42, 1499} {
		r = runCmd(t, "cat", filepath.Join(mnt, strconv.Itoa(n)))
		if r.code != 0 || r.stdout != string(recs[n]) {
			t.Errorf("cat MNT/%d: exit %d %q", n, r.code, r.stderr)
		}
	}
	// grep -r finds each marker in its record only; twice (cold, warm).
	for pass := range 2 {
		r = runCmd(t, "grep", "-r", "-l", "-F", "<rec-1234>", mnt)
		if r.code != 0 || strings.TrimSpace(r.stdout) != filepath.Join(mnt, "001234") {
			t.Errorf("grep -r pass %d: exit %d, %q", pass, r.code, r.stdout)
		}
	}
	r = runCmd(t, "grep", "-r", "-c", "-F", "<rec-", mnt)
	if n := strings.Count(r.stdout, ":1\n"); n != len(recs) {
		t.Errorf("grep -r -c matched %d records, want %d", n, len(recs))
	}
	// The same inode numbers after a remount.
	ino := func() string { return runCmd(t, "stat", "-c", "%i", filepath.Join(mnt, "000777")).stdout }
	first := ino()
	if r := runRecfs(t, "unmount", mnt); r.code != 0 {
		t.Fatalf("unmount: %d %s", r.code, r.stderr)
	}
	startMount(t, src, mnt, "--no-cache")
	if again := ino(); again != first || first == "" {
		t.Errorf("inode of 000777 changed across remounts: %q then %q", first, again)
	}
}

// TestTreeMount mounts a directory holding record files and other files.
func TestTreeMount(t *testing.T) {
	needFUSE(t)
	srcDir := t.TempDir()
	logRecs := genRecords(2, 20, 100)
	rioRecs := genRecords(3, 30, 100)
	recfile.WriteLog(t, filepath.Join(srcDir, "a.log"), logRecs)
	if err := os.MkdirAll(filepath.Join(srcDir, "sub", "deeper"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeRio(t, filepath.Join(srcDir, "sub", "deeper", "b.data"), rioRecs, []byte("TRAILER <rec-trailer>"))
	if err := os.WriteFile(filepath.Join(srcDir, "notes.txt"), []byte("plain text <rec-3>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	junk := make([]byte, 70000)
	rand.New(rand.NewSource(4)).Read(junk)
	if err := os.WriteFile(filepath.Join(srcDir, "sub", "junk.bin"), junk, 0o644); err != nil {
		t.Fatal(err)
	}

	for _, hide := range []bool{false, true} {
		t.Run(fmt.Sprintf("hide-other=%v", hide), func(t *testing.T) {
			mnt := newMountDir(t)
			args := []string{"--no-cache"}
			if hide {
				args = append(args, "--hide-other")
			}
			startMount(t, srcDir, mnt, args...)
			r := runCmd(t, "ls", "-F", mnt)
			want := "a.log/\nnotes.txt\nsub/\n"
			if hide {
				want = "a.log/\nsub/\n"
			}
			if r.stdout != want {
				t.Errorf("ls -F MNT = %q, want %q", r.stdout, want)
			}
			r = runCmd(t, "ls", filepath.Join(mnt, "sub"))
			want = "deeper\njunk.bin\n"
			if hide {
				want = "deeper\n"
			}
			if r.stdout != want {
				t.Errorf("ls MNT/sub = %q, want %q", r.stdout, want)
			}
			for i, rec := range logRecs {
				b, err := os.ReadFile(filepath.Join(mnt, "a.log", fmt.Sprintf("%06d", i)))
				if err != nil || !bytes.Equal(b, rec) {
					t.Fatalf("a.log/%d: %v", i, err)
				}
			}
			b, err := os.ReadFile(filepath.Join(mnt, "sub", "deeper", "b.data", "29"))
			if err != nil || !bytes.Equal(b, rioRecs[29]) {
				t.Errorf("b.data/29: %v", err)
			}
			b, err = os.ReadFile(filepath.Join(mnt, "sub", "deeper", "b.data", "trailer", "000000"))
			if err != nil || string(b) != "TRAILER <rec-trailer>" {
				t.Errorf("b.data trailer: %q %v", b, err)
			}
			// grep -r sees records (and plain files unless hidden).
			r = runCmd(t, "grep", "-r", "-l", "-F", "<rec-3>", mnt)
			got := strings.Fields(r.stdout)
			wantFiles := []string{filepath.Join(mnt, "a.log", "000003"), filepath.Join(mnt, "sub", "deeper", "b.data", "000003")}
			if !hide {
				wantFiles = append(wantFiles, filepath.Join(mnt, "notes.txt"))
			}
			if len(got) != len(wantFiles) {
				t.Errorf("grep -r -l <rec-3>: %q, want %q", got, wantFiles)
			}
			for _, w := range wantFiles {
				if !strings.Contains(r.stdout, w+"\n") {
					t.Errorf("grep -r missed %s", w)
				}
			}
			if !hide {
				b, err := os.ReadFile(filepath.Join(mnt, "sub", "junk.bin"))
				if err != nil || !bytes.Equal(b, junk) {
					t.Errorf("junk.bin passed through wrong: %v", err)
				}
			}
		})
	}
}

// TestDamaged corrupts one byte of a log and mounts it: the records of the
// other blocks survive, and .recfs lists the damaged range.
func TestDamaged(t *testing.T) {
	needFUSE(t)
	recs := genRecords(5, 300, 400) // ~70 KiB: three blocks
	src := filepath.Join(t.TempDir(), "damaged.log")
	offs := recfile.WriteLog(t, src, recs)
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	// Corrupt a payload byte of the first record that starts well inside
	// block 1.
	victim := -1
	for i, o := range offs {
		if o > 32768+1000 && o+7+int64(len(recs[i])) < 65536 {
			victim = i
			break
		}
	}
	if victim < 0 {
		t.Fatal("no record inside block 1")
	}
	data[offs[victim]+7+2] ^= 0xff
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}

	mnt := newMountDir(t)
	startMount(t, src, mnt, "--no-cache")
	ents, err := os.ReadDir(mnt)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]byte
	for _, e := range ents {
		if e.Name() == ".recfs" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(mnt, e.Name()))
		if err != nil {
			t.Fatalf("survivor %s: %v", e.Name(), err)
		}
		got = append(got, b)
	}
	// Survivors keep file order and are intact written records; the victim
	// is gone; records that lie wholly in block 0 or wholly in block 2 and
	// beyond are all present.
	j := 0
	present := map[int]bool{}
	for _, b := range got {
		for j < len(recs) && !bytes.Equal(recs[j], b) {
			j++
		}
		if j == len(recs) {
			t.Fatalf("a survivor matches no written record in order")
		}
		present[j] = true
		j++
	}
	if present[victim] {
		t.Errorf("corrupted record %d survived", victim)
	}
	for i, o := range offs {
		end := o + 7 + int64(len(recs[i]))
		if (end <= 32768 || o >= 65536) && !present[i] {
			t.Errorf("record %d (offset %d) outside the damaged block is missing", i, o)
		}
	}
	info := infoLines(t, filepath.Join(mnt, ".recfs"))
	if len(info["damage"]) == 0 {
		t.Fatalf(".recfs lists no damage")
	}
	m := regexp.MustCompile(`offset=(\d+) length=(\d+)`).FindStringSubmatch(info["damage"][0])
	if m == nil {
		t.Fatalf("damage line %q", info["damage"][0])
	}
	doff, _ := strconv.ParseInt(m[1], 10, 64)
	dlen, _ := strconv.ParseInt(m[2], 10, 64)
	if !(doff <= offs[victim] && offs[victim] < doff+dlen) {
		t.Errorf("damage [%d,+%d) does not cover the corrupted record at %d", doff, dlen, offs[victim])
	}
	if info["records"][0] != strconv.Itoa(len(got)) {
		t.Errorf(".recfs records %v, listed %d", info["records"], len(got))
	}

	// --strict refuses the file.
	mnt2 := newMountDir(t)
	r := runRecfs(t, "mount", "--no-cache", "--strict", src, mnt2)
	if r.code != 1 || mountedAt(mnt2) != "" {
		t.Errorf("strict mount of a damaged file: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestErrnos checks EROFS, ENOENT and EIO for a record corrupted after the
// index was built (which changed the source: every record is EIO then).
func TestErrnos(t *testing.T) {
	needFUSE(t)
	recs := genRecords(6, 50, 200)
	src := filepath.Join(t.TempDir(), "e.log")
	offs := recfile.WriteLog(t, src, recs)
	mnt := newMountDir(t)
	m := startMount(t, src, mnt, "--no-cache")

	for _, tc := range []struct {
		what string
		err  error
		want syscall.Errno
	}{
		{"create", func() error { _, err := os.Create(filepath.Join(mnt, "new")); return err }(), syscall.EROFS},
		{"write", func() error {
			_, err := os.OpenFile(filepath.Join(mnt, "000001"), os.O_WRONLY, 0)
			return err
		}(), syscall.EROFS},
		{"mkdir", os.Mkdir(filepath.Join(mnt, "d"), 0o755), syscall.EROFS},
		{"unlink", os.Remove(filepath.Join(mnt, "000001")), syscall.EROFS},
		{"missing", func() error { _, err := os.Stat(filepath.Join(mnt, "000050")); return err }(), syscall.ENOENT},
		{"bad padding", func() error { _, err := os.Stat(filepath.Join(mnt, "0042")); return err }(), syscall.ENOENT},
		{"not a number", func() error { _, err := os.Stat(filepath.Join(mnt, "x")); return err }(), syscall.ENOENT},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.what, tc.err, tc.want)
		}
	}

	// Corrupt record 30 in the source after it was indexed (and before
	// anything read it, so no page cache hides the change).
	f, err := os.OpenFile(src, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{'#'}, offs[30]+7+3); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = os.ReadFile(filepath.Join(mnt, "000030"))
	if !errors.Is(err, syscall.EIO) {
		t.Errorf("read of a record corrupted after indexing: %v, want EIO", err)
	}
	// The source changed under the mount: its other records are EIO too
	// (the bytes might be of another version), not served.
	if b, err := os.ReadFile(filepath.Join(mnt, "000031")); !errors.Is(err, syscall.EIO) {
		t.Errorf("neighbour record of a changed source: %d bytes, %v; want EIO", len(b), err)
	}
	// The failure is logged once with file, record and offset.
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(m.stderr.String(), "record=30") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if s := m.stderr.String(); !strings.Contains(s, "record=30") || !strings.Contains(s, "file="+src) {
		t.Errorf("no log line with file and record:\n%s", s)
	}
}

// TestCommandErrors checks refusals and exit statuses; no mount succeeds.
func TestCommandErrors(t *testing.T) {
	needFUSE(t)
	dir := t.TempDir()
	text := filepath.Join(dir, "plain.txt")
	if err := os.WriteFile(text, []byte("hello, not records\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	logf := filepath.Join(dir, "ok.log")
	recfile.WriteLog(t, logf, genRecords(7, 3, 10))
	nonEmpty := t.TempDir()
	if err := os.WriteFile(filepath.Join(nonEmpty, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	inside := filepath.Join(dir, "mnt")
	if err := os.Mkdir(inside, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"not records", []string{"mount", text, newMountDir(t)}, 1, "not a record file"},
		{"missing source", []string{"mount", filepath.Join(dir, "nope.log"), newMountDir(t)}, 1, "no such file"},
		{"missing mountpoint", []string{"mount", logf, filepath.Join(dir, "nope")}, 1, "no such file"},
		{"non-empty", []string{"mount", logf, nonEmpty}, 1, "not empty"},
		{"inside source", []string{"mount", dir, inside}, 1, "inside the source"},
		{"new format", []string{"mount", "--rw", "--new-format", "csv", logf, newMountDir(t)}, 2, "--new-format"},
		{"backend", []string{"mount", "--backend", "x", logf, newMountDir(t)}, 2, "unknown --backend"},
		{"args", []string{"mount", logf}, 2, ""},
		{"unmount nothing", []string{"unmount", newMountDir(t)}, 1, "not a mount point"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runRecfs(t, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.msg) {
				t.Errorf("recfs %q: exit %d, stderr %q; want exit %d and %q", tc.args, r.code, r.stderr, tc.code, tc.msg)
			}
		})
	}
	for _, p := range recfsMounts() {
		if strings.HasPrefix(p, dir) {
			t.Errorf("a refused mount is mounted at %s", p)
		}
	}

	// A busy mountpoint.
	mnt := newMountDir(t)
	startMount(t, logf, mnt, "--no-cache")
	r := runRecfs(t, "mount", logf, mnt)
	if r.code != 1 || !strings.Contains(r.stderr, "busy") {
		t.Errorf("second mount on a busy mountpoint: exit %d, %q", r.code, r.stderr)
	}
	// --allow-non-empty mounts over files.
	startMount(t, logf, nonEmpty, "--no-cache", "--allow-non-empty")
	if _, err := os.Stat(filepath.Join(nonEmpty, "000002")); err != nil {
		t.Errorf("mount over a non-empty directory: %v", err)
	}
}

// TestLifecycle ends mounts with SIGINT, SIGTERM and recfs unmount; each
// time the serving process exits 0 and the mount is gone.
func TestLifecycle(t *testing.T) {
	needFUSE(t)
	src := tempLog(t, "l.log", genRecords(8, 10, 50))
	for _, how := range []string{"SIGINT", "SIGTERM", "unmount", "bazil-SIGINT", "bazil-unmount"} {
		t.Run(how, func(t *testing.T) {
			args := []string{"--no-cache"}
			if b, ok := strings.CutPrefix(how, "bazil-"); ok {
				needBackend(t, "bazil")
				args, how = append(args, "--backend", "bazil"), b
			}
			mnt := newMountDir(t)
			m := startMount(t, src, mnt, args...)
			if !strings.Contains(m.stdout.String(), "ready") {
				// "ready" is printed once the mount answers; mountinfo can
				// list it a moment earlier.
				deadline := time.Now().Add(mountTimeout)
				for !strings.Contains(m.stdout.String(), "ready") && time.Now().Before(deadline) {
					time.Sleep(5 * time.Millisecond)
				}
			}
			if !strings.Contains(m.stdout.String(), "ready") {
				t.Errorf("no ready message: %q", m.stdout.String())
			}
			switch how {
			case "SIGINT":
				_ = m.cmd.Process.Signal(syscall.SIGINT)
			case "SIGTERM":
				_ = m.cmd.Process.Signal(syscall.SIGTERM)
			default:
				if r := runRecfs(t, "unmount", mnt); r.code != 0 || !strings.Contains(r.stdout, "unmounted") {
					t.Errorf("recfs unmount: %d %q %q", r.code, r.stdout, r.stderr)
				}
			}
			if code := m.wait(t); code != 0 {
				t.Errorf("exit status %d after %s\n%s", code, how, m.stderr)
			}
			if mountedAt(mnt) != "" {
				t.Errorf("still mounted after %s", how)
			}
		})
	}
}

// TestDaemonKilled starts a daemon, kills it with SIGKILL and cleans the
// stale mount up with recfs unmount.
func TestDaemonKilled(t *testing.T) {
	needFUSE(t)
	recs := genRecords(9, 10, 50)
	src := tempLog(t, "d.log", recs)
	mnt := newMountDir(t)
	detachAtCleanup(t, mnt)
	r := runRecfs(t, "mount", "--daemon", "--no-cache", src, mnt)
	if r.code != 0 {
		t.Fatalf("mount --daemon: exit %d, %q", r.code, r.stderr)
	}
	// --daemon returns once the mount answers: no polling needed.
	if b, err := os.ReadFile(filepath.Join(mnt, "000003")); err != nil || !bytes.Equal(b, recs[3]) {
		t.Fatalf("read through the daemon's mount: %v", err)
	}
	pm := regexp.MustCompile(`daemon pid (\d+)`).FindStringSubmatch(r.stdout)
	if pm == nil {
		t.Fatalf("no daemon pid in %q", r.stdout)
	}
	pid, _ := strconv.Atoi(pm[1])
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Wait (bounded) for the process to die and the mount to go stale.
	waitFor(t, exitTimeout, 10*time.Millisecond, func() (bool, string) {
		// Open, not stat: a stat may be answered from the attribute cache.
		f, err := os.Open(mnt)
		if err == nil {
			f.Close()
		}
		return errors.Is(err, syscall.ENOTCONN), fmt.Sprintf("mount not stale after SIGKILL: %v", err)
	})
	if mountedAt(mnt) != "fuse.recfs" {
		t.Fatal("stale mount not listed")
	}
	r = runRecfs(t, "mount", src, mnt)
	if r.code != 1 || !strings.Contains(r.stderr, "stale") {
		t.Errorf("mount over a stale mount: exit %d %q", r.code, r.stderr)
	}
	r = runRecfs(t, "unmount", mnt)
	if r.code != 0 || !strings.Contains(r.stdout, "stale") {
		t.Errorf("recfs unmount of a stale mount: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	if mountedAt(mnt) != "" {
		t.Error("stale mount still listed after recfs unmount")
	}
	// And the directory can be mounted again.
	startMount(t, src, mnt, "--no-cache")
	if _, err := os.Stat(filepath.Join(mnt, "000009")); err != nil {
		t.Error(err)
	}
}

// TestXattrs reads the user.recfs.* attributes of a grailbio vector with
// --xattrs, and checks that they are absent without it.
func TestXattrs(t *testing.T) {
	needFUSE(t)
	e := codectest.LoadExpect(t, filepath.Join(vectors, "grailbio", "header-types.rio.json"))
	src, err := filepath.Abs(e.File)
	if err != nil {
		t.Fatal(err)
	}
	get := func(path, name string) (string, error) {
		buf := make([]byte, 4096)
		n, err := syscall.Getxattr(path, name, buf)
		if err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	}
	mnt := newMountDir(t)
	startMount(t, src, mnt, "--no-cache", "--xattrs")
	if v, err := get(mnt, "user.recfs.records"); err != nil || v != strconv.FormatInt(e.Count, 10) {
		t.Errorf("user.recfs.records = %q, %v; want %d", v, err, e.Count)
	}
	if v, err := get(mnt, "user.recfs.format"); err != nil || v != "recordio" {
		t.Errorf("user.recfs.format = %q, %v", v, err)
	}
	for _, h := range e.Header {
		if _, err := get(mnt, "user.recfs.header."+h.Key); err != nil {
			t.Errorf("user.recfs.header.%s: %v", h.Key, err)
		}
	}
	rec := filepath.Join(mnt, recordName(0, e.Count))
	if v, err := get(rec, "user.recfs.length"); err != nil || v != strconv.FormatInt(e.Lens[0], 10) {
		t.Errorf("user.recfs.length = %q, %v; want %d", v, err, e.Lens[0])
	}
	if _, err := get(rec, "user.recfs.offset"); err != nil {
		t.Errorf("user.recfs.offset: %v", err)
	}
	buf := make([]byte, 4096)
	n, err := syscall.Listxattr(rec, buf)
	if err != nil || !strings.Contains(string(buf[:n]), "user.recfs.length\x00") {
		t.Errorf("listxattr: %q %v", buf[:n], err)
	}

	plain := newMountDir(t)
	startMount(t, src, plain, "--no-cache")
	if _, err := get(plain, "user.recfs.records"); err == nil {
		t.Error("xattrs served without --xattrs")
	}
}

// TestBusyUnmount: a mount with an open file refuses a plain unmount with a
// clear message and goes away with --lazy.
func TestBusyUnmount(t *testing.T) {
	needFUSE(t)
	recs := genRecords(10, 5, 50)
	src := tempLog(t, "b.log", recs)
	mnt := newMountDir(t)
	m := startMount(t, src, mnt, "--no-cache")
	f, err := os.Open(filepath.Join(mnt, "000004"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := runRecfs(t, "unmount", mnt)
	if r.code != 1 || !strings.Contains(r.stderr, "busy") || mountedAt(mnt) != "fuse.recfs" {
		t.Errorf("unmount of a busy mount: exit %d %q", r.code, r.stderr)
	}
	r = runRecfs(t, "unmount", "--lazy", mnt)
	if r.code != 0 || mountedAt(mnt) != "" {
		t.Errorf("lazy unmount: exit %d %q", r.code, r.stderr)
	}
	// The open file still reads after the detach.
	b := make([]byte, 100)
	if n, _ := f.ReadAt(b, 0); string(b[:n]) != string(recs[4]) {
		t.Errorf("read after lazy detach: %q", b[:n])
	}
	f.Close()
	if code := m.wait(t); code != 0 {
		t.Errorf("mount process exit %d\n%s", code, m.stderr)
	}
}
