package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	nfsc "github.com/willscott/go-nfs-client/nfs"
	"github.com/willscott/go-nfs-client/nfs/rpc"
	"golang.org/x/net/webdav"
)

// The Serve rows measure `recfs serve` against a plain static file server
// over the same records as files on tmpfs, with the same client in the
// same run: `rclone copy` of the whole record directory over WebDAV
// (beside golang.org/x/net/webdav's Handler over webdav.Dir) and `wget -r`
// over HTTP (beside net/http's FileServer), rounds alternated; a warm
// "grep -r" over NFS (a Go walk with go-nfs-client reading every record
// and searching it for the needle; this kernel has no NFS client) beside
// the same walk over a recfs FUSE mount of the log; and each server's peak
// RSS (VmHWM) after its row.

// serveIDs are the rows of the Serve section.
var serveIDs = []string{"serve-webdav-rclone", "serve-http-wget", "serve-nfs-grep-warm",
	"serve-rss-webdav", "serve-rss-http", "serve-rss-nfs"}

// staticEnv, when set (to webdav or http), makes this program a static
// file server of the directory named by its argument: the peer of the
// Serve rows, run as its own process so its RSS is its own.
const staticEnv = "RECFS_BENCH_STATIC"

// serveStatic serves dir over proto on a free loopback port, prints
// {"url":…} once it listens, and serves until killed.
func serveStatic(proto string, args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "static server: want one directory")
		return 2
	}
	var h http.Handler
	switch proto {
	case "webdav":
		h = &webdav.Handler{FileSystem: webdav.Dir(args[0]), LockSystem: webdav.NewMemLS()}
	case "http":
		h = http.FileServer(http.Dir(args[0]))
	default:
		fmt.Fprintf(os.Stderr, "static server: unknown protocol %q\n", proto)
		return 2
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("{\"url\":\"http://%s/\"}\n", l.Addr())
	fmt.Fprintln(os.Stderr, (&http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}).Serve(l))
	return 1
}

// server is a running server process of the Serve rows.
type server struct {
	cmd  *exec.Cmd
	url  string
	addr string
	done chan struct{}
}

// startServer runs argv (with env added) and waits for its JSON start-up
// line ({"url":…, "addr":…}).
func (b *bench) startServer(env []string, argv ...string) (*server, error) {
	c := exec.CommandContext(b.ctx, argv[0], argv[1:]...)
	c.Env = append(os.Environ(), env...)
	c.Stderr = io.Discard
	out, err := c.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := c.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: c, done: make(chan struct{})}
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(out).ReadString('\n')
		line <- l
		_, _ = io.Copy(io.Discard, out)
		_ = c.Wait()
		close(s.done)
	}()
	select {
	case l := <-line:
		var st struct{ URL, Addr string }
		if err := json.Unmarshal([]byte(l), &st); err != nil || st.URL == "" {
			s.stop()
			return nil, fmt.Errorf("%s: start-up line %q", filepath.Base(argv[0]), l)
		}
		s.url, s.addr = st.URL, st.Addr
		return s, nil
	case <-time.After(b.cfg.timeout):
		s.stop()
		return nil, fmt.Errorf("%s did not start within %v", filepath.Base(argv[0]), b.cfg.timeout)
	}
}

// stop ends the server and waits for it.
func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// countFiles returns how many regular files dir holds, recursively.
func countFiles(dir string) int {
	n := 0
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return nil
	})
	return n
}

func runServe(b *bench) {
	n := b.cfg.mountRecords
	const rs = 1024
	dir := filepath.Join(b.cfg.work, "serve")
	log := filepath.Join(dir, "records.log")
	files := filepath.Join(b.cfg.shm, "serve-files")
	cache := filepath.Join(dir, "cache")
	scale := fmt.Sprintf("%s × %s records", humanCount(n), humanBytes(rs))
	b.logf("  writing %d records of %d bytes: leveldb log, files on tmpfs", n, rs)
	if err := writeLeveldb(log, n, rs); err != nil {
		b.skipAll(serveIDs, "serve", "", err.Error())
		return
	}
	if err := writeFiles(files, n, rs); err != nil {
		b.skipAll(serveIDs, "serve", "", err.Error())
		return
	}
	defer os.RemoveAll(files)
	_ = catCmd(log)()
	if b.cfg.wantsAny([]string{"serve-webdav-rclone", "serve-rss-webdav"}) {
		b.serveCopy(scale, n, log, files, cache, "webdav", "rclone")
	}
	if b.cfg.wantsAny([]string{"serve-http-wget", "serve-rss-http"}) {
		b.serveCopy(scale, n, log, files, cache, "http", "wget")
	}
	if b.cfg.wantsAny([]string{"serve-nfs-grep-warm", "serve-rss-nfs"}) {
		b.serveNFS(scale, n, log, cache)
	}
}

// serveCopy times a whole-directory copy by client over proto from recfs
// serve and from the static peer, and records the servers' peak RSS.
func (b *bench) serveCopy(scale string, n int, log, files, cache, proto, client string) {
	id, rssID := "serve-"+proto+"-"+client, "serve-rss-"+proto
	peerName := map[string]string{"webdav": "x/net/webdav Handler over tmpfs files", "http": "net/http FileServer over tmpfs files"}[proto]
	label := fmt.Sprintf("`%s` of %s over %s", map[string]string{"rclone": "rclone copy", "wget": "wget -r"}[client], scale, proto)
	rssLabel := fmt.Sprintf("server peak RSS (VmHWM) after the %s rounds", label)
	fail := func(why string) {
		b.add(Row{ID: id, Section: "Serve", Label: label, Peer: peerName, Skip: why})
		b.add(Row{ID: rssID, Section: "Serve", Label: rssLabel, Peer: peerName, Skip: why})
	}
	if why := toolMissing(client); why != "" {
		fail(why)
		return
	}
	self, err := os.Executable()
	if err != nil {
		fail(err.Error())
		return
	}
	recfs, err := b.startServer(nil, b.cfg.bin, "serve", proto, "--json", "--cache-dir", cache, log)
	if err != nil {
		fail(err.Error())
		return
	}
	defer recfs.stop()
	peer, err := b.startServer([]string{staticEnv + "=" + proto}, self, files)
	if err != nil {
		fail(err.Error())
		return
	}
	defer peer.stop()
	conf := filepath.Join(b.cfg.work, "rclone.conf")
	if err := os.WriteFile(conf, nil, 0o600); err != nil {
		fail(err.Error())
		return
	}
	copyCmd := func(url, dst string) string {
		if client == "rclone" {
			return "RCLONE_CONFIG=" + shellQuote(conf) + " rclone copy --transfers 8 --checkers 8 --webdav-url " + shellQuote(url) + " :webdav: " + shellQuote(dst)
		}
		return "wget -q -r -l 1 -np -nH -e robots=off -P " + shellQuote(dst) + " " + shellQuote(url)
	}
	dsts := []string{filepath.Join(b.cfg.shm, "copy-recfs"), filepath.Join(b.cfg.shm, "copy-peer")}
	defer os.RemoveAll(dsts[0])
	defer os.RemoveAll(dsts[1])
	jobs := []job{
		{cmd: copyCmd(recfs.url, dsts[0]), prepare: "rm -rf " + shellQuote(dsts[0])},
		{cmd: copyCmd(peer.url, dsts[1]), prepare: "rm -rf " + shellQuote(dsts[1])},
	}
	b.logf("  %s: %d rounds", id, b.cfg.runs)
	ts, secs, cmd, err := b.timeRounds(jobs, timeOpts{runs: b.cfg.runs, shell: true})
	row := Row{ID: id, Section: "Serve", Label: label, Unit: UnitSeconds, Peer: peerName, Cmd: cmd}
	switch {
	case err != nil:
		row.Skip = err.Error()
	case countFiles(dsts[0]) < n || countFiles(dsts[1]) < n:
		row.Skip = fmt.Sprintf("incomplete copy: %d and %d files for %d records", countFiles(dsts[0]), countFiles(dsts[1]), n)
	default:
		row.Recfs, row.PeerVal = ts[0].Median, ts[1].Median
		row.PairRatio = pairRatio(secs[0], secs[1])
		row.Detail = spread(ts[0], ts[1]) + "; ratio: median of the runs' ratios"
	}
	b.add(row)
	rss := Row{ID: rssID, Section: "Serve", Label: rssLabel, Unit: UnitMiB, Peer: peerName, Cmd: b.selfCmd(id)}
	var err1, err2 error
	rss.Recfs, err1 = statusMiB(recfs.cmd.Process.Pid, "VmHWM")
	rss.PeerVal, err2 = statusMiB(peer.cmd.Process.Pid, "VmHWM")
	if err := errors.Join(err1, err2); err != nil {
		rss.Skip = err.Error()
	}
	b.add(rss)
}

// walkGrep reads every file of a flat directory (names from list, bytes
// from read) and counts those holding the needle, as grep -r would.
func walkGrep(n int, list func() ([]string, error), read func(name string, buf *bytes.Buffer) error) func() error {
	return func() error {
		names, err := list()
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		hits, files := 0, 0
		for _, name := range names {
			if strings.HasPrefix(name, ".") {
				continue
			}
			buf.Reset()
			if err := read(name, &buf); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			files++
			if bytes.Contains(buf.Bytes(), []byte(needle)) {
				hits++
			}
		}
		if want := (n + 99) / 100; files != n || hits != want {
			return fmt.Errorf("read %d files with %d hits, want %d and %d", files, hits, n, want)
		}
		return nil
	}
}

// serveNFS times a warm grep over recfs serve nfs beside the same walk
// over a recfs FUSE mount, and records both servers' peak RSS.
func (b *bench) serveNFS(scale string, n int, log, cache string) {
	const peerName = "recfs gofuse mount"
	label := fmt.Sprintf("warm `grep -r` of %s (a Go walk reading every record: go-nfs-client over NFS)", scale)
	rssLabel := "server peak RSS (VmHWM) after the NFS grep rounds"
	fail := func(why string) {
		b.add(Row{ID: "serve-nfs-grep-warm", Section: "Serve", Label: label, Peer: peerName, Skip: why})
		b.add(Row{ID: "serve-rss-nfs", Section: "Serve", Label: rssLabel, Peer: peerName, Skip: why})
	}
	srv, err := b.startServer(nil, b.cfg.bin, "serve", "nfs", "--json", "--cache-dir", cache, log)
	if err != nil {
		fail(err.Error())
		return
	}
	defer srv.stop()
	_, portStr, _ := net.SplitHostPort(srv.addr)
	port, _ := strconv.Atoi(portStr)
	c, err := nfsc.DialServiceAtPort("127.0.0.1", port)
	if err != nil {
		fail("nfs dial: " + err.Error())
		return
	}
	defer c.Close()
	tg, err := (&nfsc.Mount{Client: c}).Mount("/", rpc.NewAuthUnix("recfs-bench", 0, 0).Auth())
	if err != nil {
		fail("nfs mount: " + err.Error())
		return
	}
	defer tg.Close()
	mnt := filepath.Join(b.cfg.work, "mnt", "serve-gofuse")
	k := b.recfsKind("gofuse", log, mnt, cache)
	if err := b.mounts.up(k); err != nil {
		fail("mount: " + err.Error())
		return
	}
	defer b.mounts.down(mnt)
	overNFS := walkGrep(n, func() ([]string, error) {
		ents, err := tg.ReadDirPlus("/")
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		return names, err
	}, func(name string, buf *bytes.Buffer) error {
		f, err := tg.Open("/" + name)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = buf.ReadFrom(f)
		return err
	})
	overFUSE := walkGrep(n, func() ([]string, error) {
		ents, err := os.ReadDir(mnt)
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		return names, err
	}, func(name string, buf *bytes.Buffer) error {
		f, err := os.Open(filepath.Join(mnt, name))
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = buf.ReadFrom(f)
		return err
	})
	b.logf("  serve-nfs-grep-warm: %d rounds after a warm-up", b.cfg.runs)
	secs, err := b.funcRounds(b.cfg.runs, overNFS, overFUSE)
	row := Row{ID: "serve-nfs-grep-warm", Section: "Serve", Label: label, Unit: UnitSeconds, Peer: peerName + " (the same walk)", Cmd: b.selfCmd("serve-nfs-grep-warm")}
	if err != nil {
		row.Skip = err.Error()
	} else {
		t0, t1 := summarizeSecs(secs[0]), summarizeSecs(secs[1])
		row.Recfs, row.PeerVal = t0.Median, t1.Median
		row.PairRatio = pairRatio(secs[0], secs[1])
		row.Detail = spread(t0, t1) + "; ratio: median of the runs' ratios"
	}
	b.add(row)
	rss := Row{ID: "serve-rss-nfs", Section: "Serve", Label: rssLabel, Unit: UnitMiB, Peer: peerName, Cmd: b.selfCmd("serve-nfs-grep-warm")}
	fusePID, err3 := serverPID(mnt)
	var err1, err2 error
	rss.Recfs, err1 = statusMiB(srv.cmd.Process.Pid, "VmHWM")
	if err3 == nil {
		rss.PeerVal, err2 = statusMiB(fusePID, "VmHWM")
	}
	if err := errors.Join(err1, err3, err2); err != nil {
		rss.Skip = err.Error()
	}
	b.add(rss)
}
