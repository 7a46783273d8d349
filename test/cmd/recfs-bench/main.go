// Command recfs-bench measures recfs against the tools a user would
// otherwise pick (pebble, goleveldb and grailbio readers, tmpfs,
// squashfuse, fuse-zip) and against the machine's limits (cat of the
// source), pair by pair in one run, and writes docs/BENCHMARKS.md and
// docs/benchmarks.png.
//
// It is what `make bench` runs:
//
//	make bench                      # default sizes (mount rows at 100k records)
//	make bench BENCHFLAGS=-quick    # small sizes, a minute or two
//	make bench BENCHFLAGS='-records 2000000 -only mount -no-squashfuse'
//	make bench BENCHFLAGS='-only mount,scan-1k-pebble'
//
// It must run as root (or with FUSE usable and drop_caches writable for the
// cold rows); missing Debian tools (squashfuse, squashfs-tools, fuse-zip,
// hyperfine) are installed with apt-get when possible, and a row whose tool
// or recfs feature is missing is printed as "not measured: <why>".
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// config is the run's settings, from flags.
type config struct {
	bin      string  // recfs binary
	out      string  // where BENCHMARKS.md and benchmarks.png go
	work     string  // scratch directory on disk
	shm      string  // scratch directory on tmpfs (the tmpfs peer)
	quick    bool    // small sizes
	scale    float64 // multiplies every size
	only     string  // comma-separated row IDs or prefixes ("" = all)
	runs     int     // timed runs per command
	timeout  time.Duration
	keep     bool // keep the scratch data
	noApt    bool // never apt-get install
	noHyper  bool // time shell commands in-process even when hyperfine exists
	argsUsed string

	scanBytes     int64  // size of each scan file
	openRecords   int    // records of the open/RSS log
	mountRecords  int    // records of the mount comparison
	bigRecord     int64  // size of the one big record
	memRecords    int    // records of the bytes-per-record log
	appendRecords int    // records of one append batch
	mountOverride int    // -records: records of the mount rows (0 = default)
	fuseZip       bool   // -fuse-zip: add fuse-zip to the mount rows' peers
	noSquashfs    bool   // -no-squashfuse: leave squashfuse out of the mount rows
	backends      string // -backends: recfs FUSE backends of the mount rows
}

// sizes sets the data sizes from quick and scale.
func (c *config) sizes() {
	// The mount rows run at the issue's 100k records: since read-only
	// mounts send no per-file OPEN/FLUSH/RELEASE, a warm pass over 100k
	// records takes under a second, and the rows time the file systems in
	// alternation in-process (no hyperfine start-up per run).
	c.scanBytes, c.openRecords, c.mountRecords = 1<<30, 1_000_000, 100_000
	c.bigRecord, c.memRecords, c.appendRecords = 1<<30, 10_000_000, 100_000
	if c.quick {
		c.scanBytes, c.openRecords, c.mountRecords = 64<<20, 100_000, 10_000
		c.bigRecord, c.memRecords, c.appendRecords = 64<<20, 1_000_000, 10_000
	}
	s := c.scale
	c.scanBytes = int64(float64(c.scanBytes) * s)
	c.bigRecord = int64(float64(c.bigRecord) * s)
	c.openRecords = max(1, int(float64(c.openRecords)*s))
	c.mountRecords = max(1, int(float64(c.mountRecords)*s))
	c.memRecords = max(1, int(float64(c.memRecords)*s))
	c.appendRecords = max(1, int(float64(c.appendRecords)*s))
	if c.mountOverride > 0 {
		c.mountRecords = c.mountOverride
	}
}

// issueSizes are the sizes the issue names, for the document's note on
// what this run scaled down.
var issueSizes = config{scanBytes: 1 << 30, openRecords: 1_000_000, mountRecords: 100_000,
	bigRecord: 1 << 30, memRecords: 10_000_000, appendRecords: 100_000}

// scaledDown lists the sizes of c that differ from the issue's.
func (c *config) scaledDown() []string {
	var out []string
	diff := func(what string, got, want string) {
		if got != want {
			out = append(out, fmt.Sprintf("%s %s instead of %s", what, got, want))
		}
	}
	is := issueSizes
	diff("scan files", humanBytes(c.scanBytes), humanBytes(is.scanBytes))
	diff("open/RSS log", humanCount(c.openRecords)+" records", humanCount(is.openRecords)+" records")
	if c.mountRecords < is.mountRecords {
		diff("mount rows", humanCount(c.mountRecords)+" records", humanCount(is.mountRecords)+" records")
	}
	diff("big record", humanBytes(c.bigRecord), humanBytes(is.bigRecord))
	diff("bytes/record", humanCount(c.memRecords)+" records", humanCount(is.memRecords)+" records")
	return out
}

// wants reports whether the row id was selected with -only: an exact ID,
// a prefix of IDs ("mount", "scan-1k") or a section name.
func (c *config) wants(id string) bool {
	if c.only == "" {
		return true
	}
	for _, w := range strings.Split(c.only, ",") {
		w = strings.TrimSpace(strings.ToLower(w))
		if w != "" && (id == w || strings.HasPrefix(id, w+"-") || strings.HasPrefix(id, w)) {
			return true
		}
	}
	return false
}

func main() {
	if proto := os.Getenv(staticEnv); proto != "" {
		os.Exit(serveStatic(proto, os.Args[1:]))
	}
	var c config
	flag.StringVar(&c.bin, "bin", "../bin/recfs", "recfs binary to measure")
	flag.StringVar(&c.out, "out", "../docs", "directory for BENCHMARKS.md and benchmarks.png")
	flag.StringVar(&c.work, "work", "/tmp/recfs-bench", "scratch directory on disk (emptied first)")
	flag.StringVar(&c.shm, "shm", "/dev/shm/recfs-bench", "scratch directory on tmpfs for the tmpfs peer")
	flag.BoolVar(&c.quick, "quick", false, "small sizes (a minute or two)")
	flag.Float64Var(&c.scale, "size-scale", 1, "multiply every data size by this factor")
	flag.StringVar(&c.only, "only", "", "comma-separated row IDs, ID prefixes or sections to run (default all)")
	flag.IntVar(&c.mountOverride, "records", 0, "records of the mount rows (default 100000, or 10000 with -quick, times -size-scale; 2000000 for the issue's millions)")
	flag.IntVar(&c.mountOverride, "mount-records", 0, "same as -records")
	flag.StringVar(&c.backends, "backends", "gofuse,bazil", "comma-separated recfs FUSE backends the mount rows measure")
	flag.BoolVar(&c.noSquashfs, "no-squashfuse", false, "leave squashfuse out of the mount rows (its ls -l grows faster than linearly: 35 s at 100k records)")
	flag.BoolVar(&c.fuseZip, "fuse-zip", false, "add fuse-zip to the mount rows' peers (slow past 100k records)")
	flag.IntVar(&c.runs, "runs", 3, "timed runs of each command (median reported)")
	flag.DurationVar(&c.timeout, "timeout", 5*time.Minute, "limit for each subprocess")
	flag.BoolVar(&c.keep, "keep", false, "keep the scratch data and print where it is")
	flag.BoolVar(&c.noApt, "no-apt", false, "never install missing tools with apt-get")
	flag.BoolVar(&c.noHyper, "no-hyperfine", false, "time shell commands in-process instead of with hyperfine")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: recfs-bench [flags]\n\nMeasures recfs against its peers and writes OUT/BENCHMARKS.md and OUT/benchmarks.png.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 || c.scale <= 0 || c.runs < 1 {
		flag.Usage()
		os.Exit(2)
	}
	c.argsUsed = strings.Join(os.Args[1:], " ")
	c.sizes()
	os.Exit(run(c))
}

// run does the whole measurement and returns the exit status.
func run(c config) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	b := &bench{ctx: ctx, cfg: c, logf: func(f string, a ...any) {
		fmt.Fprintf(os.Stderr, "%s "+f+"\n", append([]any{time.Now().Format("15:04:05")}, a...)...)
	}}
	b.mounts = &mounts{b: b, active: map[string]string{}}
	var err error
	if b.cfg.bin, err = filepath.Abs(c.bin); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := os.Stat(b.cfg.bin); err != nil {
		fmt.Fprintf(os.Stderr, "recfs-bench: %v (run make build first)\n", err)
		return 1
	}
	for _, d := range []string{c.work, c.shm} {
		os.RemoveAll(d)
		if err := os.MkdirAll(d, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	// Cleanup on every path, including a signal: unmount, then remove data.
	defer func() {
		b.mounts.downAll()
		if c.keep {
			b.logf("scratch data kept in %s and %s", c.work, c.shm)
			return
		}
		os.RemoveAll(c.work)
		os.RemoveAll(c.shm)
	}()
	b.setupTools()
	b.checkDropCaches()
	b.loadStart = loadAvg()
	start := time.Now()
	for _, s := range sections {
		if ctx.Err() != nil {
			break
		}
		if !c.wantsAny(s.ids) {
			continue
		}
		b.logf("== %s", s.name)
		s.run(b)
		b.mounts.downAll()
	}
	if ctx.Err() != nil {
		b.logf("interrupted: nothing written")
		return 1
	}
	elapsed := time.Since(start)
	if err := b.writeDocs(elapsed); err != nil {
		fmt.Fprintln(os.Stderr, "recfs-bench:", err)
		return 1
	}
	b.logf("wrote %s and %s in %s", filepath.Join(c.out, "BENCHMARKS.md"), filepath.Join(c.out, "benchmarks.png"), elapsed.Round(time.Second))
	return 0
}

// wantsAny reports whether any of ids is selected.
func (c *config) wantsAny(ids []string) bool {
	for _, id := range ids {
		if c.wants(id) {
			return true
		}
	}
	return false
}

// setupTools installs missing Debian tools (once, with apt-get) and finds
// hyperfine.
func (b *bench) setupTools() {
	want := map[string]string{"squashfuse": "squashfuse", "mksquashfs": "squashfs-tools", "fuse-zip": "fuse-zip", "hyperfine": "hyperfine"}
	var missing []string
	for tool, pkg := range want {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, pkg)
		}
	}
	if len(missing) > 0 && !b.cfg.noApt && os.Geteuid() == 0 {
		b.logf("installing %s with apt-get", strings.Join(missing, " "))
		if _, err := b.sh("apt-get update -qq"); err != nil {
			b.logf("apt-get update: %v", err)
		}
		if _, err := b.sh("DEBIAN_FRONTEND=noninteractive apt-get install -y -qq " + strings.Join(missing, " ")); err != nil {
			b.logf("apt-get install: %v", err)
		}
	}
	if b.cfg.noHyper {
		b.logf("-no-hyperfine: timing commands in-process")
	} else if p, err := exec.LookPath("hyperfine"); err == nil {
		b.hyperfine = p
	} else {
		b.logf("hyperfine not available: timing commands in-process")
	}
}

// toolMissing returns why tool cannot be used, or "".
func toolMissing(tool string) string {
	if _, err := exec.LookPath(tool); err != nil {
		return tool + " not installed"
	}
	return ""
}

// runDetached runs a shell command with its own timeout, independent of the
// run's context (for cleanup after a signal).
func runDetached(cmd string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c := exec.CommandContext(ctx, "sh", "-c", cmd)
	c.WaitDelay = 5 * time.Second
	return c.Run()
}

// machine describes the machine for the document.
func machine() string {
	cpu := "unknown CPU"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(l, "model name") {
				if i := strings.Index(l, ":"); i >= 0 {
					cpu = strings.TrimSpace(l[i+1:])
				}
				break
			}
		}
	}
	var uts syscall.Utsname
	kernel := "unknown kernel"
	if syscall.Uname(&uts) == nil {
		var sb strings.Builder
		for _, c := range uts.Release {
			if c == 0 {
				break
			}
			sb.WriteByte(byte(c))
		}
		kernel = "Linux " + sb.String()
	}
	mem := ""
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		if f := strings.Fields(strings.SplitN(string(data), "\n", 2)[0]); len(f) >= 2 {
			mem = ", " + f[1] + " kB RAM"
		}
	}
	return fmt.Sprintf("%d CPUs (%s)%s, %s, %s", runtime.NumCPU(), cpu, mem, kernel, runtime.Version())
}

// loadAvg returns the 1, 5 and 15 minute load averages, to show how busy
// the shared machine was.
func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " / ")
}
