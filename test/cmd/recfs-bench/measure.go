package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

// bench holds what every measurement needs: the run's context, settings and
// the mounts to clean up.
type bench struct {
	ctx       context.Context
	cfg       config
	hyperfine string // path of hyperfine, "" to time commands ourselves
	mounts    *mounts
	logf      func(format string, args ...any)
	dropOK    bool   // drop_caches is writable
	dropWhy   string // why not, when !dropOK
	rows      []Row
	loadStart string // load averages when measuring began
}

// timing is what one timed command gave: median and spread in seconds.
type timing struct {
	Median, Min, Max float64
	Runs             int
}

// spread describes a set of timings for the table's detail column.
func spread(ts ...timing) string {
	var parts []string
	for _, t := range ts {
		parts = append(parts, fmt.Sprintf("%d runs, %s–%s s", t.Runs, formatFigure(t.Min), formatFigure(t.Max)))
	}
	return strings.Join(parts, "; ")
}

// shellQuote quotes s for sh when it holds anything but safe characters.
func shellQuote(s string) string {
	safe := s != ""
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("/._-=+:,@%", c)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellJoin quotes and joins argv for display and for sh -c.
func shellJoin(argv ...string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

// sh runs a shell command with the run's subprocess timeout and returns its
// combined output.
func (b *bench) sh(cmd string) (string, error) {
	ctx, cancel := context.WithTimeout(b.ctx, b.cfg.timeout)
	defer cancel()
	c := exec.CommandContext(ctx, "sh", "-c", cmd)
	c.WaitDelay = 5 * time.Second
	out, err := c.CombinedOutput()
	if ctx.Err() == context.DeadlineExceeded {
		err = fmt.Errorf("timed out after %s", b.cfg.timeout)
	}
	if err != nil {
		return string(out), fmt.Errorf("%s: %v: %s", cmd, err, errorLine(string(out)))
	}
	return string(out), nil
}

// run runs argv directly (no shell) with stdin read from the file stdin
// ("" for none), under the run's subprocess timeout, and returns its
// combined output. Rows that time one command use it so that the time is
// that command's process alone, not a shell's too.
func (b *bench) run(stdin string, argv ...string) (string, error) {
	ctx, cancel := context.WithTimeout(b.ctx, b.cfg.timeout)
	defer cancel()
	c := exec.CommandContext(ctx, argv[0], argv[1:]...)
	c.WaitDelay = 5 * time.Second
	if stdin != "" {
		f, err := os.Open(stdin)
		if err != nil {
			return "", err
		}
		defer f.Close()
		c.Stdin = f
	}
	out, err := c.CombinedOutput()
	if ctx.Err() == context.DeadlineExceeded {
		err = fmt.Errorf("timed out after %s", b.cfg.timeout)
	}
	if err != nil {
		return string(out), fmt.Errorf("%s: %v: %s", shellJoin(argv...), err, errorLine(string(out)))
	}
	return string(out), nil
}

// errorLine returns the first line of out that mentions an error, or else
// its first non-empty line.
func errorLine(out string) string {
	var first string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(strings.ToLower(l), "error") {
			return lastLine(l)
		}
		if first == "" && strings.TrimSpace(l) != "" {
			first = l
		}
	}
	return lastLine(first)
}

// lastLine returns the last non-empty line of s, shortened.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	l := strings.TrimSpace(lines[len(lines)-1])
	if len(l) > 200 {
		l = l[:200] + "…"
	}
	return l
}

// job is one command to time: prepare runs (untimed, through sh) before
// every run. cmd has no redirection: its output is discarded as the
// timeOpts say.
type job struct {
	cmd     string
	prepare string
}

// timeOpts say how to time a set of jobs.
type timeOpts struct {
	runs, warmup int
	// pipe sends output through a pipe instead of to /dev/null: GNU grep
	// stops at the first match when its output is /dev/null.
	pipe bool
	// shell runs the commands through sh (for && and such); otherwise they
	// are split into words and run directly, with no shell start-up to
	// subtract, which matters for commands of a few milliseconds.
	shell bool
}

// sinkSuffix is the shell redirection that does what o says with output.
func (o timeOpts) sinkSuffix() string {
	if o.pipe {
		return " | cat > /dev/null"
	}
	return " > /dev/null"
}

// timeJobs times each job, with hyperfine when it is available (one
// invocation for all jobs, so the returned command line reproduces the
// figures) and otherwise by itself. It returns one timing per job and the
// command line to show.
func (b *bench) timeJobs(jobs []job, o timeOpts) ([]timing, string, error) {
	if b.hyperfine != "" {
		return b.hyperfineJobs(jobs, o)
	}
	var ts []timing
	var shown []string
	for _, j := range jobs {
		var secs []float64
		cmd := j.cmd
		if o.shell {
			cmd = "{ " + cmd + "; }"
		}
		cmd += o.sinkSuffix()
		for i := 0; i < o.warmup+o.runs; i++ {
			if j.prepare != "" {
				if _, err := b.sh(j.prepare); err != nil {
					return nil, "", err
				}
			}
			start := time.Now()
			if _, err := b.sh(cmd); err != nil {
				return nil, "", err
			}
			if i >= o.warmup {
				secs = append(secs, time.Since(start).Seconds())
			}
		}
		ts = append(ts, summarizeSecs(secs))
		shown = append(shown, cmd)
	}
	return ts, strings.Join(shown, " ; "), nil
}

// hyperfineJobs runs one hyperfine invocation over jobs.
func (b *bench) hyperfineJobs(jobs []job, o timeOpts) ([]timing, string, error) {
	out, err := os.CreateTemp(b.cfg.work, "hyperfine-*.json")
	if err != nil {
		return nil, "", err
	}
	out.Close()
	defer os.Remove(out.Name())
	args := []string{"--style", "basic", "--runs", strconv.Itoa(o.runs)}
	if !o.shell {
		args = append(args, "-N")
	}
	if o.pipe {
		args = append(args, "--output", "pipe")
	}
	if o.warmup > 0 {
		args = append(args, "--warmup", strconv.Itoa(o.warmup))
	}
	anyPrep := false
	for _, j := range jobs {
		anyPrep = anyPrep || j.prepare != ""
	}
	if anyPrep {
		for _, j := range jobs {
			p := j.prepare
			if p == "" {
				p = "true"
			}
			if !o.shell {
				p = shellJoin("sh", "-c", p)
			}
			args = append(args, "--prepare", p)
		}
	}
	shown := shellJoin(append([]string{"hyperfine"}, args...)...)
	for _, j := range jobs {
		shown += " " + shellQuote(j.cmd)
	}
	args = append(args, "--export-json", out.Name())
	for _, j := range jobs {
		args = append(args, j.cmd)
	}
	// hyperfine gets the whole budget for all its runs.
	limit := b.cfg.timeout * time.Duration(len(jobs))
	ctx, cancel := context.WithTimeout(b.ctx, limit)
	defer cancel()
	c := exec.CommandContext(ctx, b.hyperfine, args...)
	c.WaitDelay = 5 * time.Second
	var buf bytes.Buffer
	c.Stdout, c.Stderr = &buf, &buf
	b.logf("  $ %s", shown)
	if err := c.Run(); err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			err = fmt.Errorf("timed out after %s", limit)
		}
		return nil, shown, fmt.Errorf("hyperfine: %v: %s", err, errorLine(buf.String()))
	}
	var res struct {
		Results []struct {
			Times []float64 `json:"times"`
		} `json:"results"`
	}
	data, err := os.ReadFile(out.Name())
	if err == nil {
		err = json.Unmarshal(data, &res)
	}
	if err != nil {
		return nil, shown, fmt.Errorf("hyperfine output: %v", err)
	}
	if len(res.Results) != len(jobs) {
		return nil, shown, fmt.Errorf("hyperfine gave %d results for %d commands", len(res.Results), len(jobs))
	}
	ts := make([]timing, len(jobs))
	for i, r := range res.Results {
		ts[i] = summarizeSecs(r.Times)
	}
	return ts, shown, nil
}

// timeRounds times jobs in alternation: each round runs every job once, in
// turn (its prepare first, untimed), so drift on the shared machine hits
// them alike. It returns each job's timing and the seconds of every counted
// round (secs[job][round]), for ratios taken round by round.
func (b *bench) timeRounds(jobs []job, o timeOpts) ([]timing, [][]float64, string, error) {
	secs := make([][]float64, len(jobs))
	var shown []string
	for _, j := range jobs {
		shown = append(shown, j.cmd+o.sinkSuffix())
	}
	for i := 0; i < o.warmup+o.runs; i++ {
		for k, j := range jobs {
			if j.prepare != "" {
				if _, err := b.sh(j.prepare); err != nil {
					return nil, nil, "", err
				}
			}
			start := time.Now()
			if _, err := b.sh(j.cmd + o.sinkSuffix()); err != nil {
				return nil, nil, "", err
			}
			if i >= o.warmup {
				secs[k] = append(secs[k], time.Since(start).Seconds())
			}
		}
	}
	ts := make([]timing, len(jobs))
	for k := range jobs {
		ts[k] = summarizeSecs(secs[k])
	}
	return ts, secs, strings.Join(shown, " ; "), nil
}

// cacheDrops returns how many times the kernel's caches were dropped since
// boot (drop_caches writes, counted in /proc/vmstat), or -1 if unknown.
// Another process dropping them during a warm row (the e2e tests drop the
// slab caches) makes the kernel forget every FUSE inode: the warm pass then
// pays a LOOKUP and a READ per file, and its figure is not a warm one.
func cacheDrops() int64 {
	data, err := os.ReadFile("/proc/vmstat")
	if err != nil {
		return -1
	}
	var n int64
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) == 2 && (f[0] == "drop_slab" || f[0] == "drop_pagecache") {
			v, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return -1
			}
			n += v
		}
	}
	return n
}

// pairRatio returns the median over rounds of peer/recfs (recfs ahead above
// 1) for two columns of timeRounds seconds.
func pairRatio(recfs, peer []float64) float64 {
	var q []float64
	for i := range recfs {
		if i < len(peer) && recfs[i] > 0 {
			q = append(q, peer[i]/recfs[i])
		}
	}
	return summarizeSecs(q).Median
}

// summarizeSecs returns the median, min and max of secs.
func summarizeSecs(secs []float64) timing {
	if len(secs) == 0 {
		return timing{}
	}
	s := append([]float64(nil), secs...)
	sort.Float64s(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return timing{Median: med, Min: s[0], Max: s[len(s)-1], Runs: len(s)}
}

// timeFuncs times Go functions pairwise: each round runs every function
// once, in turn, so drift on a shared machine hits all of them alike.
// It returns one timing per function.
func (b *bench) timeFuncs(runs int, fns ...func() error) ([]timing, error) {
	secs, err := b.funcRounds(runs, fns...)
	if err != nil {
		return nil, err
	}
	ts := make([]timing, len(fns))
	for k := range fns {
		ts[k] = summarizeSecs(secs[k])
	}
	return ts, nil
}

// funcRounds runs fns in alternation, one warm-up round then runs counted
// rounds, and returns the seconds of each (secs[fn][round]). Each run
// starts after a garbage collection, so that none pays for the garbage
// of the one before.
func (b *bench) funcRounds(runs int, fns ...func() error) ([][]float64, error) {
	secs := make([][]float64, len(fns))
	for i := 0; i <= runs; i++ { // round 0 warms up
		for k, fn := range fns {
			if err := b.ctx.Err(); err != nil {
				return nil, err
			}
			runtime.GC()
			start := time.Now()
			if err := fn(); err != nil {
				return nil, err
			}
			if i > 0 {
				secs[k] = append(secs[k], time.Since(start).Seconds())
			}
		}
	}
	return secs, nil
}

// dropCachesCmd is the shell command that empties the page, dentry and
// inode caches.
const dropCachesCmd = "sync; echo 3 > /proc/sys/vm/drop_caches"

// checkDropCaches finds out whether the page cache can be dropped.
func (b *bench) checkDropCaches() {
	if _, err := b.sh(dropCachesCmd); err != nil {
		b.dropOK, b.dropWhy = false, "drop_caches not permitted: "+err.Error()
		return
	}
	b.dropOK = true
}

// rssMiB returns the resident set size of pid in MiB.
func rssMiB(pid int) (float64, error) { return statusMiB(pid, "VmRSS") }

// statusMiB returns the field (VmRSS, VmHWM…) of pid's /proc status in MiB.
func statusMiB(pid int, field string) (float64, error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == field+":" {
			kb, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				return 0, err
			}
			return kb / 1024, nil
		}
	}
	return 0, fmt.Errorf("pid %d: no %s", pid, field)
}

// serverPID finds the process serving the FUSE mount at mnt: the one whose
// command line has mnt as an argument (recfs, squashfuse and fuse-zip all
// keep it there).
func serverPID(mnt string) (int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(data), "\x00"), "\x00")
		if len(args) < 2 {
			continue
		}
		base := filepath.Base(args[0])
		if base == "sh" || base == "bash" || base == "hyperfine" {
			continue
		}
		for _, a := range args[1:] {
			if a == mnt {
				return pid, nil
			}
		}
	}
	return 0, fmt.Errorf("no process serves %s", mnt)
}
