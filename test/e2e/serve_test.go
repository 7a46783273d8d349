package e2e

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"image/png"
	"io"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/recfs/recfs/codec/codectest/recfile"
	"github.com/recfs/recfs/test/internal/vgw"
)

// `recfs serve webdav|http|nfs` through the binary, read by real clients:
// rclone (WebDAV), curl (HTTP), libnfs's nfs-ls and nfs-cat (NFS; this
// kernel has no NFS client). .ci/run installs them; a test skips only
// where its client is missing.

// served is a running `recfs serve`.
type served struct {
	proto, url, addr string
	cmd              *exec.Cmd
	stderr           *bytes.Buffer
	done             chan error
}

// startServe runs `recfs serve PROTO --json ARGS...` and waits for its
// start-up line. The cleanup sends SIGTERM and requires a clean exit.
func startServe(t *testing.T, proto string, args ...string) *served {
	t.Helper()
	needBinary(t)
	s := &served{proto: proto, stderr: &bytes.Buffer{}, done: make(chan error, 1)}
	s.cmd = exec.Command(bin, append([]string{"serve", proto, "--json"}, args...)...)
	s.cmd.Stderr = s.stderr
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(out).ReadString('\n')
		line <- l
		_, _ = io.Copy(io.Discard, out)
		s.done <- s.cmd.Wait()
	}()
	var l string
	select {
	case l = <-line:
	case <-time.After(mountTimeout):
		_ = s.cmd.Process.Kill()
		t.Fatalf("recfs serve %s did not start within %v", proto, mountTimeout)
	}
	var st struct{ Status, Protocol, URL, Addr string }
	if err := json.Unmarshal([]byte(l), &st); err != nil || st.Status != "serving" || st.Protocol != proto || st.URL == "" {
		_ = s.cmd.Process.Kill()
		<-s.done
		t.Fatalf("start-up line %q (%v); stderr:\n%s", l, err, s.stderr)
	}
	s.url, s.addr = st.URL, st.Addr
	t.Cleanup(func() {
		if code := s.stop(t); code != 0 {
			t.Errorf("recfs serve %s exited %d after SIGTERM; stderr:\n%s", proto, code, s.stderr)
		}
	})
	return s
}

// stop sends SIGTERM (once) and returns the exit status.
func (s *served) stop(t *testing.T) int {
	t.Helper()
	if s.cmd.ProcessState == nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(exitTimeout):
			_ = s.cmd.Process.Kill()
			<-s.done
			t.Fatalf("recfs serve %s did not exit within %v of SIGTERM\nstderr:\n%s", s.proto, exitTimeout, s.stderr)
		}
	}
	return s.cmd.ProcessState.ExitCode()
}

// need skips the test when tool is not installed.
func need(t *testing.T, tool, pkg string) {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		t.Skipf("%s not installed (Debian package %s; .ci/run installs it)", tool, pkg)
	}
}

// catRecords returns every record of src as `recfs cat --json` reads it.
func catRecords(t *testing.T, src string) [][]byte {
	t.Helper()
	r := runRecfs(t, "cat", "--json", src)
	if r.code != 0 {
		t.Fatalf("recfs cat: %d %s", r.code, r.stderr)
	}
	var recs [][]byte
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var j struct {
			N    int64
			Data string
		}
		if err := json.Unmarshal([]byte(l), &j); err != nil || j.N != int64(len(recs)) {
			t.Fatalf("recfs cat --json line %q: %v", l, err)
		}
		b, err := base64.StdEncoding.DecodeString(j.Data)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, b)
	}
	return recs
}

// serveFixture is a served directory: events.log (a leveldb log of n
// records), notes.txt, and beside the directory a secret that symbolic
// links inside it point at.
func serveFixture(t *testing.T, n int) (dir, log string, recs [][]byte) {
	t.Helper()
	root := t.TempDir()
	dir = filepath.Join(root, "data")
	outside := filepath.Join(root, "outside")
	for _, d := range []string{dir, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	log = filepath.Join(dir, "events.log")
	recfile.WriteLog(t, log, genRecords(7, n, 400))
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "notes.txt"), "plain notes\n")
	write(filepath.Join(outside, "secret.txt"), "SECRET outside the tree\n")
	for name, target := range map[string]string{"leak.txt": "../outside/secret.txt", "escape": "../outside"} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir, log, catRecords(t, log)
}

// rclone runs rclone against the WebDAV server at url with an empty
// configuration.
func rclone(t *testing.T, url string, args ...string) result {
	t.Helper()
	conf := filepath.Join(t.TempDir(), "rclone.conf")
	if err := os.WriteFile(conf, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	c := exec.Command("rclone", args...)
	c.Env = append(os.Environ(), "RCLONE_CONFIG="+conf, "RCLONE_WEBDAV_URL="+url)
	return runPrepared(t, c)
}

// TestServeWebDAVRclone: rclone lists, cats and copies a record directory
// over WebDAV; every byte is what recfs cat reads.
func TestServeWebDAVRclone(t *testing.T) {
	need(t, "rclone", "rclone")
	t.Parallel()
	dir, _, recs := serveFixture(t, 300)
	s := startServe(t, "webdav", dir)
	r := rclone(t, s.url, "lsf", ":webdav:")
	if r.code != 0 || !strings.Contains(r.stdout, "events.log/\n") || !strings.Contains(r.stdout, "notes.txt\n") || strings.Contains(r.stdout, "escape") {
		t.Fatalf("rclone lsf of the root: %d %q %s", r.code, r.stdout, r.stderr)
	}
	r = rclone(t, s.url, "lsf", ":webdav:events.log")
	names := strings.Fields(r.stdout)
	if r.code != 0 || len(names) != len(recs)+1 {
		t.Fatalf("rclone lsf events.log: %d, %d names for %d records: %s", r.code, len(names), len(recs), r.stderr)
	}
	for _, n := range []int{0, 1, 150, len(recs) - 1} {
		r := rclone(t, s.url, "cat", fmt.Sprintf(":webdav:events.log/%06d", n))
		if r.code != 0 || r.stdout != string(recs[n]) {
			t.Fatalf("rclone cat of record %d: %d, %d bytes, want %d: %s", n, r.code, len(r.stdout), len(recs[n]), r.stderr)
		}
	}
	dst := t.TempDir()
	if r := rclone(t, s.url, "copy", ":webdav:events.log", dst); r.code != 0 {
		t.Fatalf("rclone copy: %d %s", r.code, r.stderr)
	}
	for n, want := range recs {
		got, err := os.ReadFile(filepath.Join(dst, fmt.Sprintf("%06d", n)))
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("record %d copied by rclone: %v, %d bytes, want %d", n, err, len(got), len(want))
		}
	}
	if info, err := os.ReadFile(filepath.Join(dst, ".recfs")); err != nil || !strings.Contains(string(info), "records: 300") {
		t.Fatalf(".recfs copied by rclone: %v %q", err, info)
	}
}

// curl runs curl and returns its output; -sS and a time bound always.
func curl(t *testing.T, args ...string) result {
	t.Helper()
	return runCmd(t, "curl", append([]string{"-sS", "--max-time", "30"}, args...)...)
}

// TestServeHTTPCurl: curl reads a record whole and by Range, the JSON
// listing by ?json and by Accept, and the browse page shows a decoded
// record.
func TestServeHTTPCurl(t *testing.T) {
	need(t, "curl", "curl")
	t.Parallel()
	dir, _, recs := serveFixture(t, 120)
	s := startServe(t, "http", dir)
	for _, n := range []int{0, 77, 119} {
		if r := curl(t, fmt.Sprintf("%sevents.log/%06d", s.url, n)); r.code != 0 || r.stdout != string(recs[n]) {
			t.Fatalf("curl record %d: %d, %d bytes: %s", n, r.code, len(r.stdout), r.stderr)
		}
	}
	rec := recs[77]
	r := curl(t, "-D", "-", "-r", "5-24", s.url+"events.log/000077")
	head, body, _ := strings.Cut(r.stdout, "\r\n\r\n")
	if !strings.HasPrefix(head, "HTTP/1.1 206") || body != string(rec[5:25]) ||
		!strings.Contains(head, fmt.Sprintf("Content-Range: bytes 5-24/%d", len(rec))) || !strings.Contains(head, "Etag: \"") {
		t.Fatalf("curl -r 5-24: %q\n%q", head, body)
	}
	type listing struct {
		Type    string
		Total   int
		Entries []struct {
			Name   string
			Size   int64
			Record *int64
			Offset *int64
		}
	}
	for _, args := range [][]string{{s.url + "events.log/?json"}, {"-H", "Accept: application/json", s.url + "events.log/"}} {
		var l listing
		r := curl(t, args...)
		if err := json.Unmarshal([]byte(r.stdout), &l); err != nil || l.Type != "records" || l.Total != len(recs)+1 {
			t.Fatalf("curl %q: %v %+v", args, err, r.stdout[:min(len(r.stdout), 300)])
		}
		for _, e := range l.Entries {
			if e.Record == nil {
				continue
			}
			if e.Name != fmt.Sprintf("%06d", *e.Record) || e.Size != int64(len(recs[*e.Record])) || e.Offset == nil {
				t.Fatalf("listed %+v, record of %d bytes", e, len(recs[*e.Record]))
			}
		}
	}
	// A page of the listing, and the plain index wget -r follows.
	var l listing
	if r := curl(t, s.url+"events.log/?json&offset=100&limit=5"); json.Unmarshal([]byte(r.stdout), &l) != nil || len(l.Entries) != 5 || *l.Entries[0].Record != 100 {
		t.Fatalf("a page of the listing: %s", r.stdout)
	}
	if r := curl(t, s.url); !strings.Contains(r.stdout, `<a href="events.log/">`) || strings.Contains(r.stdout, "SECRET") {
		t.Fatalf("the root's index: %s", r.stdout)
	}
	// A search streams what grep -rn would print.
	r = curl(t, s.url+"events.log/?search=%3Crec-42%3E")
	if want := fmt.Sprintf("events.log/000042:1:%s", recs[42]); strings.TrimSpace(r.stdout) != want {
		t.Fatalf("search: %q, want %q", r.stdout, want)
	}
	// The browse page of a record.
	r = curl(t, "-H", "Accept: text/html", s.url+"events.log/000042?view")
	if !strings.Contains(r.stdout, "&lt;rec-42&gt;") || !strings.Contains(r.stdout, "00000000  ") {
		t.Fatalf("the record's page:\n%s", r.stdout)
	}
}

// libnfsURL is the libnfs URL of path on the NFS server s.
func (s *served) libnfsURL(path string) string {
	_, port, _ := strings.Cut(s.addr, ":")
	return fmt.Sprintf("nfs://127.0.0.1/%s?version=3&nfsport=%s&mountport=%s", path, port, port)
}

// TestServeNFS: libnfs's nfs-ls lists the export and nfs-cat reads
// records as recfs cat does (no kernel NFS client here).
func TestServeNFS(t *testing.T) {
	need(t, "nfs-ls", "libnfs-utils")
	need(t, "nfs-cat", "libnfs-utils")
	t.Parallel()
	dir, _, recs := serveFixture(t, 150)
	s := startServe(t, "nfs", dir)
	if !strings.HasPrefix(s.url, "nfs://127.0.0.1//?version=3&nfsport=") {
		t.Fatalf("url %q", s.url)
	}
	r := runCmd(t, "nfs-ls", s.libnfsURL("/events.log"))
	for _, n := range []int{0, 149} {
		if r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf(" %06d\n", n)) {
			t.Fatalf("nfs-ls: %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	}
	for _, n := range []int{0, 3, 99, 149} {
		r := runCmd(t, "nfs-cat", s.libnfsURL(fmt.Sprintf("/events.log/%06d", n)))
		if r.code != 0 || r.stdout != string(recs[n]) {
			t.Fatalf("nfs-cat of record %d: %d, %d bytes, want %d: %s", n, r.code, len(r.stdout), len(recs[n]), r.stderr)
		}
	}
	for _, p := range []string{"/leak.txt", "/escape/secret.txt", "/../outside/secret.txt"} {
		if r := runCmd(t, "nfs-cat", s.libnfsURL(p)); r.code == 0 || strings.Contains(r.stdout, "SECRET") {
			t.Errorf("nfs-cat %s: %d %q", p, r.code, r.stdout)
		}
	}
}

// TestServeTraversalRefused: no request path, plain or encoded, reaches
// a file outside the served directory, over HTTP or WebDAV.
func TestServeTraversalRefused(t *testing.T) {
	need(t, "curl", "curl")
	t.Parallel()
	dir, _, _ := serveFixture(t, 5)
	for _, proto := range []string{"http", "webdav"} {
		s := startServe(t, proto, dir)
		for _, p := range []string{
			"../outside/secret.txt", "events.log/../../outside/secret.txt", "%2e%2e/outside/secret.txt",
			"%2E%2E%2Foutside%2Fsecret.txt", "events.log/%2e%2e/%2e%2e/outside/secret.txt", "..%5coutside%5csecret.txt",
			"leak.txt", "escape/secret.txt", "escape/", "%2Fetc%2Fpasswd", "/etc/passwd", "notes.txt%00",
		} {
			for _, method := range []string{"GET", "PROPFIND"} {
				if method == "PROPFIND" && proto == "http" {
					continue
				}
				r := curl(t, "--path-as-is", "-X", method, "-H", "Depth: 1", "-o", "-", "-w", "\n%{http_code}", s.url+p)
				i := strings.LastIndexByte(r.stdout, '\n')
				code, _ := strconv.Atoi(r.stdout[i+1:])
				if code < 400 || strings.Contains(r.stdout, "SECRET") || strings.Contains(r.stdout, "root:") {
					t.Errorf("%s %s %s: %d %q", proto, method, p, code, r.stdout)
				}
			}
		}
		if r := curl(t, s.url+"notes.txt"); r.stdout != "plain notes\n" {
			t.Fatalf("%s: a plain file: %q %s", proto, r.stdout, r.stderr)
		}
		for _, method := range []string{"PUT", "DELETE", "MKCOL", "PROPPATCH", "LOCK", "MOVE", "COPY"} {
			r := curl(t, "-X", method, "-o", "/dev/null", "-w", "%{http_code}", s.url+"notes.txt")
			if r.stdout != "403" && r.stdout != "405" {
				t.Errorf("%s %s: %s", proto, method, r.stdout)
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "notes.txt")); err != nil || string(b) != "plain notes\n" {
		t.Fatalf("notes.txt changed: %v %q", err, b)
	}
}

// TestServeAuthOffLoopback: an address other machines reach is refused
// without credentials; with them, a request without or with wrong ones
// is refused (401) and the right ones read.
func TestServeAuthOffLoopback(t *testing.T) {
	need(t, "curl", "curl")
	t.Parallel()
	dir, _, recs := serveFixture(t, 3)
	for _, proto := range []string{"http", "webdav", "nfs"} {
		r := runRecfs(t, "serve", proto, "--addr", "0.0.0.0:0", dir)
		if r.code == 0 || !strings.Contains(r.stderr, "--insecure-allow-anyone") {
			t.Errorf("%s on 0.0.0.0 without credentials: %d %q", proto, r.code, r.stderr)
		}
	}
	if r := runRecfs(t, "serve", "nfs", "--addr", "0.0.0.0:0", "--user", "u", dir); r.code != 2 {
		t.Errorf("nfs with --user: %d %q", r.code, r.stderr)
	}
	htpasswd := filepath.Join(t.TempDir(), "htpasswd")
	// "{SHA}" + base64(sha1("s3cret")), as htpasswd -s writes it.
	if err := os.WriteFile(htpasswd, []byte("reader:{SHA}/vNB+F2HQ559kaLUZbmHHvZrXpg=\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, auth := range [][]string{{"--user", "reader", "--pass", "s3cret"}, {"--htpasswd", htpasswd}} {
		s := startServe(t, "http", append([]string{"--addr", "0.0.0.0:0"}, append(auth, dir)...)...)
		_, port, _ := strings.Cut(s.addr, "]:")
		if port == "" {
			_, port, _ = strings.Cut(s.addr, ":")
		}
		u := fmt.Sprintf("http://127.0.0.1:%s/events.log/000001", port)
		for _, cred := range []string{"", "reader:wrong", "other:s3cret"} {
			args := []string{"-o", "/dev/null", "-w", "%{http_code}", u}
			if cred != "" {
				args = append([]string{"-u", cred}, args...)
			}
			if r := curl(t, args...); r.stdout != "401" {
				t.Errorf("%v, credentials %q: %s", auth, cred, r.stdout)
			}
		}
		if r := curl(t, "-u", "reader:s3cret", u); r.stdout != string(recs[1]) {
			t.Errorf("%v: the right credentials read %q", auth, r.stdout)
		}
	}
	// --insecure-allow-anyone serves without credentials.
	s := startServe(t, "http", "--addr", "0.0.0.0:0", "--insecure-allow-anyone", dir)
	_, port, _ := strings.Cut(strings.TrimPrefix(s.addr, "[::]"), ":")
	if r := curl(t, fmt.Sprintf("http://127.0.0.1:%s/events.log/000002", port)); r.stdout != string(recs[2]) {
		t.Errorf("--insecure-allow-anyone: %q %s", r.stdout, r.stderr)
	}
}

// listTotal returns the entries of the JSON listing at url, and its ETag.
func listTotal(t *testing.T, url string) (int, string) {
	t.Helper()
	r := curl(t, "-D", "/dev/stderr", url+"?json")
	var l struct{ Total int }
	if err := json.Unmarshal([]byte(r.stdout), &l); err != nil {
		t.Fatalf("listing %s: %v %q", url, err, r.stdout)
	}
	etag := ""
	for _, h := range strings.Split(r.stderr, "\r\n") {
		if k, v, ok := strings.Cut(h, ": "); ok && strings.EqualFold(k, "etag") {
			etag = v
		}
	}
	return l.Total, etag
}

// TestServeFollow: with --follow, records another process appends appear
// in the listing (whose validator changes) and read as written.
func TestServeFollow(t *testing.T) {
	need(t, "curl", "curl")
	t.Parallel()
	dir, log, recs := serveFixture(t, 10)
	s := startServe(t, "http", "--follow", "--follow-interval", "50ms", "--no-cache", dir)
	url := s.url + "events.log/"
	total, etag := listTotal(t, url)
	if total != len(recs)+1 {
		t.Fatalf("listing: %d entries for %d records", total, len(recs))
	}
	input := writeTemp(t, "more.txt", []byte("appended one\nappended two\n"))
	if r := runRecfs(t, "append", "--lines", log, input); r.code != 0 {
		t.Fatalf("recfs append: %d %s", r.code, r.stderr)
	}
	waitUntil(t, func() (bool, string) {
		n, tag := listTotal(t, url)
		return n == len(recs)+3 && tag != etag, fmt.Sprintf("%d entries (ETag %s, was %s), want %d", n, tag, etag, len(recs)+3)
	})
	if r := curl(t, url+"000011"); r.stdout != "appended two" {
		t.Fatalf("the appended record: %q %s", r.stdout, r.stderr)
	}
}

// TestServeS3: an s3:// object served over HTTP and NFS reads as recfs
// cat reads it.
func TestServeS3(t *testing.T) {
	need(t, "curl", "curl")
	need(t, "nfs-cat", "libnfs-utils")
	srv := startS3(t) // sets the environment: not parallel
	srv.Put(t, "serve/gen.log", genS3Log(t, 11, 40))
	url := vgw.URL("serve/gen.log")
	recs := catRecords(t, url)
	h := startServe(t, "http", "--no-cache", url)
	for _, n := range []int{0, 7, len(recs) - 1} {
		if r := curl(t, fmt.Sprintf("%s%06d", h.url, n)); r.stdout != string(recs[n]) {
			t.Fatalf("record %d over HTTP: %d bytes, want %d: %s", n, len(r.stdout), len(recs[n]), r.stderr)
		}
	}
	nf := startServe(t, "nfs", "--no-cache", url)
	if r := runCmd(t, "nfs-cat", nf.libnfsURL("/000007")); r.stdout != string(recs[7]) {
		t.Fatalf("record 7 over NFS: %d bytes, want %d: %s", len(r.stdout), len(recs[7]), r.stderr)
	}
}

// TestServeDecode: with --decode the files are the decoded texts, as in a
// mount; without it, the browse page shows each record decoded as
// --decode auto would, and a decoded search finds a key.
func TestServeDecode(t *testing.T) {
	need(t, "curl", "curl")
	t.Parallel()
	dir, want := writeGoleveldbDB(t, 20)
	wal := onlyWAL(t, dir)
	d := startServe(t, "http", "--decode", "batch", wal)
	for _, n := range []int{0, 5, 19} {
		if r := curl(t, fmt.Sprintf("%s%06d", d.url, n)); r.stdout != want[n] {
			t.Fatalf("decoded record %d: %q, want %q", n, r.stdout, want[n])
		}
	}
	raw := startServe(t, "http", dir)
	name := filepath.Base(wal)
	r := curl(t, "-H", "Accept: text/html", raw.url+name+"/000005?view")
	line, _, _ := strings.Cut(want[5], "\n")
	if !strings.Contains(r.stdout, "Decoded (batch)") || !strings.Contains(r.stdout, html.EscapeString(line)) {
		t.Fatalf("the browse page of record 5 lacks %q:\n%s", line, r.stdout)
	}
	put := strings.Split(want[5], "\n")[1] // "put KEY VALUE"
	key := strings.Fields(put)[1]
	r = curl(t, fmt.Sprintf("%s%s/?search=%s&decoded=1&fixed=1", raw.url, name, neturl.QueryEscape(key)))
	if !strings.Contains(r.stdout, name+"/000005:") {
		t.Fatalf("a decoded search for %q: %q", key, r.stdout)
	}
}

// TestServeDavfs2: davfs2 mounts the WebDAV server with the kernel and
// reads records as recfs cat does. Its directory listings are not
// checked: on this kernel davfs2's readdir fails with EINVAL against any
// server (rclone serve webdav too).
func TestServeDavfs2(t *testing.T) {
	needFUSE(t)
	need(t, "mount.davfs", "davfs2")
	if os.Geteuid() != 0 {
		t.Skip("mount -t davfs needs root here")
	}
	t.Parallel()
	dir, _, recs := serveFixture(t, 40)
	s := startServe(t, "webdav", dir)
	mnt := t.TempDir()
	c := exec.Command("mount", "-t", "davfs", "-o", "ro", s.url, mnt)
	c.Stdin = strings.NewReader("\n\n") // no user name, no password
	if r := runPrepared(t, c); r.code != 0 {
		t.Skipf("mount -t davfs failed here (%d): %s%s", r.code, r.stdout, r.stderr)
	}
	t.Cleanup(func() {
		if r := runCmd(t, "umount", mnt); r.code != 0 {
			t.Errorf("umount.davfs: %d %s", r.code, r.stderr)
		}
	})
	for _, n := range []int{0, 17, 39} {
		b, err := os.ReadFile(filepath.Join(mnt, "events.log", fmt.Sprintf("%06d", n)))
		if err != nil || !bytes.Equal(b, recs[n]) {
			t.Fatalf("record %d through davfs2: %v, %d bytes, want %d", n, err, len(b), len(recs[n]))
		}
	}
	if b, err := os.ReadFile(filepath.Join(mnt, "leak.txt")); err == nil || bytes.Contains(b, []byte("SECRET")) {
		t.Fatalf("a symbolic link out of the tree read through davfs2: %v %q", err, b)
	}
}

// chromium runs headless Chromium with args and a profile of its own.
func chromium(t *testing.T, args ...string) result {
	t.Helper()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + t.TempDir(), "--window-size=1200,900"}
	return runCmd(t, "chromium", append(base, args...)...)
}

// TestServeBrowseChromium: headless Chromium loads the browse page of a
// goleveldb WAL (the record list), a record's page (decoded) and a
// decoded search. The record page's screenshot is kept in
// $RECFS_TEST_ARTIFACTS when set.
func TestServeBrowseChromium(t *testing.T) {
	need(t, "chromium", "chromium")
	t.Parallel()
	dir, want := writeGoleveldbDB(t, 30)
	wal := onlyWAL(t, dir)
	name := filepath.Base(wal)
	s := startServe(t, "http", dir)
	shots := os.Getenv("RECFS_TEST_ARTIFACTS")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(shots, "serve-http-record.png")
	r := chromium(t, "--screenshot="+shot, s.url+name+"/000004?view")
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, r.stderr)
	}
	defer f.Close()
	if cfg, err := png.DecodeConfig(f); err != nil || cfg.Width != 1200 || cfg.Height != 900 {
		t.Fatalf("screenshot %s: %v %+v", shot, err, cfg)
	}
	t.Logf("screenshot of the record page: %s", shot)

	line, _, _ := strings.Cut(want[4], "\n")
	for _, c := range []struct{ url, want string }{
		{s.url + name + "/", `href="000029?view"`},         // the record list
		{s.url + name + "/000004?view", "Decoded (batch)"}, // a decoded record
		{s.url + name + "/000004?view", html.EscapeString(line)},
		{s.url + name + "/?fixed=1&decoded=1&search=" + neturl.QueryEscape(line), name + "/000004</a>:1"}, // a decoded search
	} {
		r := chromium(t, "--dump-dom", c.url)
		if !strings.Contains(r.stdout, c.want) {
			t.Errorf("%s as Chromium shows it lacks %q:\n%s", c.url, c.want, r.stdout)
		}
	}
}
