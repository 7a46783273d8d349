package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/recfs/recfs/test/internal/hs3"
)

// Attacks by a hostile S3 server (test/internal/hs3): answers that stall
// or drip, listings that never end or repeat themselves, a published index
// of a gigabyte, keys no kernel can name. Each drives the recfs binary.

// Deadlines short enough for tests (the defaults are seconds to minutes).
const (
	hostileBudget   = 5 * time.Second
	hostileAttempts = 3
)

var hostileFlags = []string{"--s3-connect-timeout", "2s", "--s3-first-byte-timeout", "1s",
	"--s3-idle-timeout", "1s", "--s3-retry-budget", hostileBudget.String(), "--s3-attempts", strconv.Itoa(hostileAttempts)}

// slack is what a bounded wait may take beyond its bound on a loaded
// machine (process start, the index load, the kernel's round trips).
const slack = 5 * time.Second

// runRecfsOn runs recfs with srv's environment.
func runRecfsOn(t *testing.T, srv *hs3.Server, args ...string) result {
	t.Helper()
	c := exec.Command(bin, args...)
	c.Env = append(os.Environ(), srv.Env()...)
	return runPrepared(t, c)
}

// hostileLog stores a generated leveldb log as key, writes it to a local
// file too, and returns the local path.
func hostileLog(t *testing.T, srv *hs3.Server, key string, seed uint64, n int) string {
	t.Helper()
	data := genS3Log(t, seed, n)
	srv.Put(key, data)
	local := filepath.Join(t.TempDir(), filepath.Base(key))
	if err := os.WriteFile(local, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return local
}

// indexedHostileLog starts a hostile server holding a log of n records
// generated from seed as ev.log, indexes it into a new cache directory
// and returns the server, a local copy of the log, its URL and the cache.
func indexedHostileLog(t *testing.T, seed uint64, n int) (srv *hs3.Server, local, url, cache string) {
	t.Helper()
	srv = hs3.Start(t)
	local = hostileLog(t, srv, "ev.log", seed, n)
	url = hs3.URLOf("ev.log")
	cache = t.TempDir()
	if r := runRecfsOn(t, srv, "index", "--cache-dir", cache, url); r.code != 0 {
		t.Fatalf("index: %d %s", r.code, r.stderr)
	}
	return srv, local, url, cache
}

// recordBlock returns the 1 MiB block where record n of a local file
// starts.
func recordBlock(t *testing.T, local string, n int) int64 {
	t.Helper()
	f := strings.Fields(runRecfs(t, "ls", local, strconv.Itoa(n)).stdout)
	if len(f) != 3 {
		t.Fatalf("ls %s %d: %q", local, n, f)
	}
	return int64(atoi(t, f[1])) >> 20
}

// covers tells whether a GET's range includes block blk.
func covers(r hs3.Request, blk int64) bool {
	lo, hi, ok := strings.Cut(strings.TrimPrefix(r.Range, "bytes="), "-")
	a, err1 := strconv.ParseInt(lo, 10, 64)
	b, err2 := strconv.ParseInt(hi, 10, 64)
	return ok && err1 == nil && err2 == nil && a>>20 <= blk && blk <= b>>20
}

// misbehave makes the first n GETs of key that cover block blk (all of
// them when n < 0) behave as b, and counts them.
func misbehave(srv *hs3.Server, key string, blk int64, n int, b hs3.Behavior) {
	var mu sync.Mutex
	seen := 0
	srv.OnObject(func(r *hs3.Request) hs3.Behavior {
		if r.Method != "GET" || r.Key != key || !covers(*r, blk) {
			return hs3.Behavior{}
		}
		mu.Lock()
		defer mu.Unlock()
		seen++
		if n < 0 || seen <= n {
			return b
		}
		return hs3.Behavior{}
	})
}

// getsOf returns the GETs of key that cover block blk, from request
// number since on.
func getsOf(srv *hs3.Server, since int, key string, blk int64) []hs3.Request {
	var out []hs3.Request
	for _, r := range srv.Requests()[since:] {
		if r.Method == "GET" && !r.List && r.Key == key && covers(r, blk) {
			out = append(out, r)
		}
	}
	return out
}

// TestS3HostileReads: a GET that stalls (before its headers, or after 100
// body bytes), drips or fails is abandoned at its deadline and retried on
// another connection after a pause; `recfs cat` then prints the record. A
// GET that never succeeds makes cat fail within the retry budget, after at
// most --s3-attempts GETs. A HEAD that stalls fails `recfs info` likewise.
// (Before the deadlines, a stall blocked cat for good.)
func TestS3HostileReads(t *testing.T) {
	needBinary(t)
	t.Parallel()
	cases := []struct {
		name  string
		b     hs3.Behavior
		times int // GETs that misbehave; -1: all
	}{
		{"stall after 100 bytes once", hs3.Behavior{StallAfter: 100}, 1},
		{"stall before headers once", hs3.Behavior{StallHeaders: true}, 1},
		{"503 once", hs3.Behavior{Status: 503}, 1},
		{"stall after 100 bytes twice", hs3.Behavior{StallAfter: 100}, 2},
		{"stall after 100 bytes always", hs3.Behavior{StallAfter: 100}, -1},
		{"stall before headers always", hs3.Behavior{StallHeaders: true}, -1},
		{"drip always", hs3.Behavior{Drip: 50 * time.Millisecond}, -1},
		{"500 always", hs3.Behavior{Status: 500}, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv, local, url, cache := indexedHostileLog(t, 21, 400)
			const rec = 200
			blk := recordBlock(t, local, rec)
			want := runRecfs(t, "cat", local, strconv.Itoa(rec))
			misbehave(srv, "ev.log", blk, c.times, c.b)
			mark := len(srv.Requests())
			start := time.Now()
			r := runRecfsOn(t, srv, append(append([]string{"cat", "--cache-dir", cache}, hostileFlags...), url, strconv.Itoa(rec))...)
			took := time.Since(start)
			gets := getsOf(srv, mark, "ev.log", blk)
			t.Logf("cat: exit %d after %v, %d GETs of block %d; %s", r.code, took.Round(time.Millisecond), len(gets), blk, r.stderr)
			if took > hostileBudget+slack {
				t.Errorf("cat took %v; the retry budget is %v", took, hostileBudget)
			}
			if c.times < 0 {
				if r.code != 1 || r.stdout != "" {
					t.Errorf("cat of a record the store never sends: exit %d, %d bytes out\n%s", r.code, len(r.stdout), r.stderr)
				}
				if len(gets) == 0 || len(gets) > hostileAttempts {
					t.Errorf("%d GETs; want 1 to %d (--s3-attempts)", len(gets), hostileAttempts)
				}
				if n := strings.Count(r.stderr, "\n"); n != 1 || !strings.Contains(r.stderr, "s3") {
					t.Errorf("stderr: %d lines, want one:\n%s", n, r.stderr)
				}
				return
			}
			if r.code != 0 || r.stdout != want.stdout {
				t.Fatalf("cat: exit %d, %d bytes (want %d)\n%s", r.code, len(r.stdout), len(want.stdout), r.stderr)
			}
			if len(gets) != c.times+1 {
				t.Errorf("%d GETs of the block, want %d (one retry each)", len(gets), c.times+1)
			}
			// A stalled attempt's connection is abandoned: the retry comes
			// on another one.
			for i := 1; i < len(gets); i++ {
				if c.b.Status == 0 && gets[i].Conn == gets[i-1].Conn {
					t.Errorf("GET %d retried on the stalled connection %d", i, gets[i].Conn)
				}
				if gap := gets[i].Start.Sub(gets[i-1].Start); c.b.Status != 0 && gap < 50*time.Millisecond {
					t.Errorf("retry %d after %v: no backoff", i, gap)
				}
			}
		})
	}
	t.Run("head stalls", func(t *testing.T) {
		t.Parallel()
		srv := hs3.Start(t)
		hostileLog(t, srv, "ev.log", 22, 20)
		srv.OnObject(func(r *hs3.Request) hs3.Behavior { return hs3.Behavior{StallHeaders: r.Method == "HEAD"} })
		start := time.Now()
		r := runRecfsOn(t, srv, append(append([]string{"info", "--no-cache"}, hostileFlags...), hs3.URLOf("ev.log"))...)
		took := time.Since(start)
		heads := srv.Count(func(r hs3.Request) bool { return r.Method == "HEAD" })
		if r.code != 1 || took > hostileBudget+slack || heads == 0 || heads > hostileAttempts {
			t.Errorf("info with stalled HEADs: exit %d after %v, %d HEADs\n%s", r.code, took, heads, r.stderr)
		}
	})
}

// TestS3HostileMountReads: in a mount, a record whose block the store
// never sends fails with EIO within the retry budget (and a second record
// of that block too), logged once, while records of other blocks read
// fine meanwhile; once the store answers again, the record reads.
func TestS3HostileMountReads(t *testing.T) {
	needFUSE(t)
	t.Parallel()
	eachBackend(t, func(t *testing.T, backend string) {
		t.Parallel()
		srv, local, url, cache := indexedHostileLog(t, 23, 400)
		const stalled, other = 200, 10
		blk, oblk := recordBlock(t, local, stalled), recordBlock(t, local, other)
		same := stalled + 1
		if recordBlock(t, local, same) != blk || oblk == blk {
			t.Fatalf("records %d/%d in blocks %d/%d", stalled, same, blk, oblk)
		}
		mnt := newMountDir(t)
		m := startMountEnv(t, srv.Env(), url, mnt, append([]string{"--backend", backend, "--cache-dir", cache}, hostileFlags...)...)
		name := func(n int) string {
			return filepath.Join(mnt, fmt.Sprintf("%06d", n))
		}
		misbehave(srv, "ev.log", blk, -1, hs3.Behavior{StallAfter: 100})
		mark := len(srv.Requests())
		type read struct {
			err  error
			took time.Duration
		}
		first := make(chan read, 1)
		go func() {
			start := time.Now()
			_, err := os.ReadFile(name(stalled))
			first <- read{err, time.Since(start)}
		}()
		waitUntil(t, func() (bool, string) { return len(getsOf(srv, mark, "ev.log", blk)) > 0, "no GET of the stalled block" })
		// Another block reads while the first read waits.
		want := runRecfs(t, "cat", local, strconv.Itoa(other))
		if b, err := os.ReadFile(name(other)); err != nil || string(b) != want.stdout {
			t.Errorf("record %d of another block during the stall: %v", other, err)
		}
		for _, rd := range []func() read{
			func() read { return <-first },
			func() read { // the next record of the stalled block
				start := time.Now()
				_, err := os.ReadFile(name(same))
				return read{err, time.Since(start)}
			},
			func() read { // the first again
				start := time.Now()
				_, err := os.ReadFile(name(stalled))
				return read{err, time.Since(start)}
			},
		} {
			r := rd()
			if !errors.Is(r.err, syscall.EIO) || r.took > hostileBudget+slack {
				t.Errorf("read of a stalled record: %v after %v, want EIO within %v", r.err, r.took, hostileBudget)
			}
		}
		if n := len(getsOf(srv, mark, "ev.log", blk)); n > 3*hostileAttempts {
			t.Errorf("%d GETs of the stalled block for 3 reads", n)
		}
		// Once the store answers, a read fetches again (a failed
		// block fails reads for a second: the kernel retries a failed
		// read at once).
		srv.OnObject(nil)
		want = runRecfs(t, "cat", local, strconv.Itoa(stalled))
		waitUntil(t, func() (bool, string) {
			b, err := os.ReadFile(name(stalled))
			return err == nil && string(b) == want.stdout, fmt.Sprintf("record %d once the store answers: %v", stalled, err)
		})
		if n := logLines(m.stderr.String(), fmt.Sprintf("record=%d", stalled)); n != 1 {
			t.Errorf("%d log lines about record %d, want 1:\n%s", n, stalled, m.stderr)
		}
	})
}

// endless makes listings of prefix never end: every page holds 1,000 new
// keys of 214 bytes and says more follow (or, with repeat, sends the same
// token each time).
func endless(srv *hs3.Server, prefix string, repeat bool) {
	srv.OnList(func(r *hs3.Request, p *hs3.Page) {
		if r.Prefix != prefix {
			return
		}
		n := 0
		if r.Token != "" {
			n, _ = strconv.Atoi(strings.TrimPrefix(r.Token, "t"))
		}
		p.Keys = p.Keys[:0]
		for i := range 1000 {
			p.Keys = append(p.Keys, fmt.Sprintf("%sk%09d_%s", prefix, n*1000+i, strings.Repeat("y", 200)))
		}
		p.Truncated, p.NextToken = true, "t"+strconv.Itoa(n+1)
		if repeat {
			p.NextToken = "t1"
		}
	})
}

// TestS3HostileListings: a listing that never ends is cut at
// --s3-list-max-pages or --s3-list-max-bytes (and by default) with one
// log line; a repeated continuation token fails it; SIGINT stops `recfs ls`
// within 0.5 s with "interrupted", once. (Before, the listing went on
// until memory ran out.)
func TestS3HostileListings(t *testing.T) {
	needBinary(t)
	t.Parallel()
	lists := func(srv *hs3.Server) int { return srv.Count(hs3.IsList) }
	for _, c := range []struct {
		name      string
		args      []string
		repeat    bool
		wantCode  int
		wantPages int // 0: any up to the default
		wantErr   string
	}{
		{"max pages", []string{"--s3-list-max-pages", "5"}, false, 0, 5, "listing too long"},
		{"max bytes", []string{"--s3-list-max-bytes", "1M"}, false, 0, 4, "listing too long"},
		{"repeated token", nil, true, 1, 2, "repeated a continuation token"},
		{"default bounds", nil, false, 0, 0, "listing too long"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.name == "default bounds" && testing.Short() {
				t.Skip("a few hundred pages")
			}
			srv := hs3.Start(t)
			endless(srv, "dir/", c.repeat)
			r := runRecfsOn(t, srv, append(append([]string{"ls"}, c.args...), hs3.URLOf("dir/"))...)
			pages := lists(srv)
			lines := strings.Count(r.stdout, "\n")
			t.Logf("ls: exit %d, %d entries, %d pages", r.code, lines, pages)
			if r.code != c.wantCode || !strings.Contains(r.stderr, c.wantErr) || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("exit %d, want %d; stderr (want one line with %q):\n%s", r.code, c.wantCode, c.wantErr, r.stderr)
			}
			if (c.wantPages > 0 && pages != c.wantPages) || pages > 1000 {
				t.Errorf("%d list requests, want %d", pages, c.wantPages)
			}
			if c.wantCode == 0 && lines != 1000*pages {
				t.Errorf("%d entries from %d pages", lines, pages)
			}
		})
	}
	t.Run("SIGINT", func(t *testing.T) {
		t.Parallel()
		srv := hs3.Start(t)
		endless(srv, "dir/", false)
		c := exec.Command(bin, "ls", hs3.URLOf("dir/"))
		c.Env = append(os.Environ(), srv.Env()...)
		stderr, done := startWatched(t, c)
		t.Cleanup(func() { c.Process.Kill() })
		waitUntil(t, func() (bool, string) { return lists(srv) >= 3, fmt.Sprintf("%d list requests", lists(srv)) })
		sent := time.Now()
		c.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			c.Process.Kill()
			<-done
			t.Fatal("recfs ls still running 10 s after SIGINT")
		}
		took := time.Since(sent)
		t.Logf("recfs ls ended %v after SIGINT (%d pages listed)", took.Round(time.Millisecond), lists(srv))
		if took > 500*time.Millisecond {
			t.Errorf("recfs ls ended %v after SIGINT, want within 0.5 s", took)
		}
		if got := stderr.String(); got != "recfs: interrupted\n" {
			t.Errorf("stderr %q, want one \"recfs: interrupted\"", got)
		}
	})
}

// TestS3HostileMountListings: in a prefix mount, a listing that never ends
// is cut (one log line however often it is read); an `ls` blocked in such a
// listing ends within 0.5 s of SIGINT (the kernel's interrupt cancels the
// listing), and within 0.5 s of the mount's own SIGTERM.
func TestS3HostileMountListings(t *testing.T) {
	needFUSE(t)
	t.Parallel()
	eachBackend(t, func(t *testing.T, backend string) {
		t.Parallel()
		srv := hs3.Start(t)
		endless(srv, "cut/", false)
		mnt := newMountDir(t)
		m := startMountEnv(t, srv.Env(), hs3.URLOf("cut/"), mnt, append([]string{"--backend", backend, "--s3-list-max-pages", "1"}, hostileFlags...)...)
		for i := range 2 {
			ents, err := os.ReadDir(mnt)
			if err != nil || len(ents) != 1000 {
				t.Fatalf("listing %d of a cut directory: %d entries, %v", i, len(ents), err)
			}
		}
		if n := strings.Count(m.stderr.String(), "listing too long"); n != 1 {
			t.Errorf("%d log lines about the cut listing, want 1:\n%.3000s", n, m.stderr)
		}

		for _, sig := range []string{"ls SIGINT", "mount SIGTERM"} {
			srv := hs3.Start(t)
			endless(srv, "dir/", false)
			mnt := newMountDir(t)
			m := startMountEnv(t, srv.Env(), hs3.URLOf("dir/"), mnt, "--backend", backend)
			ls := exec.Command("ls", "-f", mnt)
			ls.Stdout = &bytes.Buffer{}
			if err := ls.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- ls.Wait() }()
			t.Cleanup(func() { ls.Process.Kill() })
			waitUntil(t, func() (bool, string) {
				return srv.Count(hs3.IsList) >= 3, fmt.Sprintf("%d list requests", srv.Count(hs3.IsList))
			})
			sent := time.Now()
			if sig == "ls SIGINT" {
				ls.Process.Signal(os.Interrupt)
			} else {
				m.cmd.Process.Signal(syscall.SIGTERM)
			}
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatalf("%s: ls still running 20 s after the signal", sig)
			}
			took := time.Since(sent)
			t.Logf("%s: ls ended %v after the signal (%d pages listed)", sig, took.Round(time.Millisecond), srv.Count(hs3.IsList))
			if took > 500*time.Millisecond {
				t.Errorf("%s: ls ended %v after the signal, want within 0.5 s", sig, took)
			}
			if sig == "mount SIGTERM" {
				if code := m.wait(t); code != 0 {
					t.Errorf("mount exited %d after SIGTERM:\n%s", code, m.stderr)
				}
			}
		}
	})
}

// TestS3HostileSidecar: a published index of 1 GiB next to a 1 MB object is
// refused from its Content-Length before it is read (and one sent without
// a length is cut at the bound a table of that object could need); one
// that stalls is given up at the deadline. The object is scanned instead,
// in bounded memory. (Before, the whole GiB was read into memory: 2.7 GB.)
func TestS3HostileSidecar(t *testing.T) {
	needBinary(t)
	t.Parallel()
	for _, c := range []struct {
		name string
		b    hs3.Behavior
	}{
		{"1 GiB with its length", hs3.Behavior{}},
		{"1 GiB without a length", hs3.Behavior{NoLength: true}},
		{"stalls", hs3.Behavior{NoLength: true, StallAfter: 100}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := hs3.Start(t)
			local := hostileLog(t, srv, "ev.log", 24, 100)
			srv.PutZeros("ev.log.recfs-idx", 1<<30)
			srv.OnObject(func(r *hs3.Request) hs3.Behavior {
				if r.Method == "GET" && r.Key == "ev.log.recfs-idx" {
					return c.b
				}
				return hs3.Behavior{}
			})
			cache := t.TempDir()
			args := []string{"info", "--json", "--cache-dir", cache}
			if c.b.StallAfter > 0 {
				args = append(args, hostileFlags...)
			}
			cmd := exec.Command(bin, append(args, hs3.URLOf("ev.log"))...)
			cmd.Env = append(os.Environ(), srv.Env()...)
			var stdout bytes.Buffer
			cmd.Stdout = &stdout
			start := time.Now()
			rss, stderr := runMeasuredCmd(t, cmd) // KiB
			took := time.Since(start)
			var sent int64
			for _, q := range srv.Requests() {
				if q.Key == "ev.log.recfs-idx" {
					sent += q.Sent
				}
			}
			t.Logf("info: %v, peak RSS %d MiB, sidecar bytes sent %d", took.Round(time.Millisecond), rss>>10, sent)
			var info, want map[string]any
			if err := json.Unmarshal(stdout.Bytes(), &info); err != nil {
				t.Fatalf("info: %v %s\n%s", err, stdout.String(), stderr)
			}
			if err := json.Unmarshal([]byte(runRecfs(t, "info", "--json", local).stdout), &want); err != nil {
				t.Fatal(err)
			}
			if info["index_source"] != "built" || info["records"] != want["records"] {
				t.Errorf("info: index %v, %v records, want built, %v", info["index_source"], info["records"], want["records"])
			}
			if n := strings.Count(stderr, "published index"); n != 1 {
				t.Errorf("%d log lines about the published index, want 1:\n%s", n, stderr)
			}
			if rss > 100<<10 {
				t.Errorf("peak RSS %d MiB", rss>>10)
			}
			bound := int64(1<<16 + 24*len(mustRead(t, local)))
			if sent > bound+32<<20 {
				t.Errorf("the server sent %d bytes of the sidecar; a table of this object is at most %d", sent, bound)
			}
			if took > hostileBudget+slack {
				t.Errorf("info took %v", took)
			}
			if left, _ := filepath.Glob(filepath.Join(cache, "*", ".tmp-*")); len(left) > 0 {
				t.Errorf("partial sidecar left in the cache: %v", left)
			}
		})
	}
}

// TestS3HostileNames: a key whose name is longer than 255 bytes is left
// out of a listing (one log line), not the whole directory; keys the store
// lists twice appear once; keys outside the prefix or with empty, "." or
// ".." segments are left out; an object and a prefix with the same name
// are both reachable: the directory keeps the name, the object is NAME
// followed by ".recfs-object". (Before, `ls` failed with EIO.)
func TestS3HostileNames(t *testing.T) {
	needFUSE(t)
	t.Parallel()
	srv := hs3.Start(t)
	a := hostileLog(t, srv, "dir/a.log", 25, 30)
	x := hostileLog(t, srv, "dir/x.log", 26, 40)
	inner := hostileLog(t, srv, "dir/x.log/inner.log", 27, 50)
	hostileLog(t, srv, "dir/z.log", 28, 20)
	long := strings.Repeat("L", 300) + ".log"
	srv.Put("dir/"+long, genS3Log(t, 29, 10))
	srv.OnList(func(r *hs3.Request, p *hs3.Page) {
		if r.Prefix == "dir/" {
			p.Keys = append(p.Keys, "dir/a.log", "dir/z.log", "elsewhere.log", "dir/../up.log", "dir/a//b.log", "dir/.", "dir/..")
			p.Prefixes = append(p.Prefixes, "dir/x.log/", "dir/../", "dir//")
		}
	})
	url := hs3.URLOf("dir/")
	r := runRecfsOn(t, srv, "ls", url)
	if got, want := sortedLines(lastFields(r.stdout)), "a.log\nx.log.recfs-object\nx.log/\nz.log"; r.code != 0 || got != want {
		t.Errorf("recfs ls: exit %d\n%s\nwant\n%s\nstderr:\n%s", r.code, got, want, r.stderr)
	}
	if n := strings.Count(r.stderr, "longer than 255 bytes"); n != 1 {
		t.Errorf("%d log lines about the long name, want 1:\n%s", n, r.stderr)
	}
	eachBackend(t, func(t *testing.T, backend string) {
		mnt := newMountDir(t)
		m := startMountEnv(t, srv.Env(), url, mnt, "--backend", backend)
		// Before any listing: each name finds its own.
		check := func(name, local string, n int) {
			t.Helper()
			want := runRecfs(t, "cat", local, strconv.Itoa(n))
			if b, err := os.ReadFile(filepath.Join(mnt, name, fmt.Sprintf("%06d", n))); err != nil || string(b) != want.stdout {
				t.Errorf("%s record %d: %v", name, n, err)
			}
		}
		check("x.log.recfs-object", x, 7)
		check("x.log/inner.log", inner, 3)
		for i := range 2 {
			ents, err := os.ReadDir(mnt)
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			if got, want := sortedLines(strings.Join(names, "\n")), "a.log\nx.log\nx.log.recfs-object\nz.log"; err != nil || got != want {
				t.Errorf("listing %d: %v\n%s\nwant\n%s", i, err, got, want)
			}
		}
		check("a.log", a, 5)
		check("x.log.recfs-object", x, 39)
		check("x.log/inner.log", inner, 49)
		if n := strings.Count(m.stderr.String(), "longer than 255 bytes"); n != 1 {
			t.Errorf("%d log lines about the long name, want 1:\n%s", n, m.stderr)
		}
	})
}

// sortedLines returns the lines of s, sorted and joined.
func sortedLines(s string) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	sort.Strings(l)
	return strings.Join(l, "\n")
}

// logLines counts the lines of log that hold the field kv ("key=value").
func logLines(log, kv string) int {
	n := 0
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l+" ", " "+kv+" ") {
			n++
		}
	}
	return n
}
