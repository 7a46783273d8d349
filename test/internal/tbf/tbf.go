// Package tbf builds a bandwidth-limited link for benchmarks: a network
// namespace joined to this one by a veth pair, with a token-bucket qdisc
// (`tc qdisc … tbf`) on the namespace's end, so that whatever a server in
// the namespace sends to this side crosses a link of a chosen rate. Traffic
// towards the namespace (uploads, ACKs) is not limited.
//
// It needs root and iproute2 (ip, tc); Missing says why a Link cannot be
// built. Close removes the namespace and the veth pair; Setup first
// removes what an earlier process killed before its Close left behind.
package tbf

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Prefix starts the name of every namespace this package makes; the rest
// is the pid of the process that made it.
const Prefix = "recfs-tbf-"

// ErrSetup wraps every failure to build a link.
var ErrSetup = errors.New("tbf: cannot set up the limited link")

// Options describe the link.
type Options struct {
	// Rate is the link's rate in bits per second (required).
	Rate int64
	// Burst is the token bucket's size in bytes (default: 4 ms at Rate,
	// at least 64 KiB, so that a 250 Hz timer can keep the rate).
	Burst int64
	// Latency bounds how long a packet may wait in the qdisc's queue
	// (default 50 ms: at 1 Gbit/s a 6 MB queue, deeper than one TCP
	// stream's window, so that a single stream can fill the link).
	Latency time.Duration
}

// Link is one namespace with a limited veth pair to this one.
type Link struct {
	// Netns is the namespace's name (`ip netns exec NETNS cmd` runs
	// cmd inside it).
	Netns string
	// HostIP is this side's address, NsIP the namespace's.
	HostIP, NsIP string
	// Rate is the configured rate in bits per second.
	Rate int64

	opt            Options
	hostDev, nsDev string
	closed         bool
}

// Missing returns why a Link cannot be built here, or "".
func Missing() string {
	if os.Geteuid() != 0 {
		return "not root: a network namespace and a tc qdisc need root"
	}
	if why := missingCaps(); why != "" {
		return why
	}
	for _, tool := range []string{"ip", "tc"} {
		if _, err := exec.LookPath(tool); err != nil {
			return tool + " not found (Debian package iproute2)"
		}
	}
	return ""
}

// Capabilities a link needs: a namespace takes CAP_SYS_ADMIN, links,
// addresses and qdiscs CAP_NET_ADMIN.
const (
	capNetAdmin = 12
	capSysAdmin = 21
)

// missingCaps returns which needed capability this process lacks (root in
// a container often has neither), or "".
func missingCaps() string {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(status), "\n") {
		hex, ok := strings.CutPrefix(line, "CapEff:")
		if !ok {
			continue
		}
		eff, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
		if err != nil {
			return ""
		}
		for _, c := range []struct {
			bit  uint
			name string
		}{{capSysAdmin, "CAP_SYS_ADMIN"}, {capNetAdmin, "CAP_NET_ADMIN"}} {
			if eff&(1<<c.bit) == 0 {
				return "root without " + c.name + " (a container?): no network namespace or tc qdisc"
			}
		}
	}
	return ""
}

// Setup builds a link named after this process: namespace Prefix+pid,
// veth pair rtbfPIDh (here) / rtbfPIDn (there), addresses in 10.213.0.0/16,
// and the tbf qdisc on the namespace's end. On failure it removes what it
// made.
func Setup(o Options) (*Link, error) {
	if why := Missing(); why != "" {
		return nil, fmt.Errorf("%w: %s", ErrSetup, why)
	}
	if o.Rate <= 0 {
		return nil, fmt.Errorf("%w: rate %d bit/s", ErrSetup, o.Rate)
	}
	RemoveStale()
	pid := os.Getpid()
	// A /30 of 10.213.0.0/16 picked by the pid, so that two processes'
	// links do not share addresses.
	i := pid % 16384
	base := fmt.Sprintf("10.213.%d.", i/64)
	l := &Link{Netns: Prefix + strconv.Itoa(pid), opt: o,
		HostIP: base + strconv.Itoa(i%64*4+1), NsIP: base + strconv.Itoa(i%64*4+2),
		hostDev: "rtbf" + strconv.Itoa(pid) + "h", nsDev: "rtbf" + strconv.Itoa(pid) + "n"}
	steps := [][]string{
		{"ip", "netns", "add", l.Netns},
		{"ip", "link", "add", l.hostDev, "type", "veth", "peer", "name", l.nsDev},
		{"ip", "link", "set", l.nsDev, "netns", l.Netns},
		{"ip", "addr", "add", l.HostIP + "/30", "dev", l.hostDev},
		{"ip", "link", "set", l.hostDev, "up"},
		{"ip", "-n", l.Netns, "addr", "add", l.NsIP + "/30", "dev", l.nsDev},
		{"ip", "-n", l.Netns, "link", "set", l.nsDev, "up"},
		{"ip", "-n", l.Netns, "link", "set", "lo", "up"},
	}
	for _, s := range steps {
		if err := run(s...); err != nil {
			l.Close()
			return nil, fmt.Errorf("%w: %v", ErrSetup, err)
		}
	}
	if err := l.SetRate(o.Rate); err != nil {
		l.Close()
		return nil, fmt.Errorf("%w: %v", ErrSetup, err)
	}
	return l, nil
}

// SetRate puts a tbf qdisc of rate bit/s on the namespace's end, in place
// of the one there (Options.Burst, unless given, follows the rate).
func (l *Link) SetRate(rate int64) error {
	if rate <= 0 {
		return fmt.Errorf("tbf: rate %d bit/s", rate)
	}
	burst, latency := l.opt.Burst, l.opt.Latency
	if burst <= 0 {
		burst = max(rate/8/250, 64<<10)
	}
	if latency <= 0 {
		latency = 50 * time.Millisecond
	}
	err := run("tc", "-n", l.Netns, "qdisc", "replace", "dev", l.nsDev, "root", "tbf",
		"rate", strconv.FormatInt(rate, 10)+"bit",
		"burst", strconv.FormatInt(burst, 10),
		"latency", strconv.FormatInt(latency.Microseconds(), 10)+"us")
	if err == nil {
		l.Rate = rate
	}
	return err
}

// Qdisc returns `tc qdisc show` of the namespace's end, to show what was
// configured.
func (l *Link) Qdisc() (string, error) {
	out, err := output("tc", "-n", l.Netns, "qdisc", "show", "dev", l.nsDev)
	return strings.TrimSpace(out), err
}

// Command returns the argv that runs argv inside the namespace.
func (l *Link) Command(argv ...string) []string {
	return append([]string{"ip", "netns", "exec", l.Netns}, argv...)
}

// Close kills what still runs in the namespace, then removes the veth pair
// and the namespace. It may be called more than once; it reports the first
// failure but tries every step.
func (l *Link) Close() error {
	if l.closed {
		return nil
	}
	l.closed = true
	return remove(l.Netns, l.hostDev)
}

// RemoveStale removes the links of processes that no longer exist (killed
// before their Close ran): namespaces named Prefix+pid whose pid is gone,
// their veth pairs, and whatever still runs inside them.
func RemoveStale() {
	out, err := output("ip", "netns", "list")
	if err != nil {
		return
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], Prefix) {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimPrefix(f[0], Prefix))
		if err != nil || pid == os.Getpid() {
			continue
		}
		if running(pid) {
			continue
		}
		remove(f[0], "rtbf"+strconv.Itoa(pid)+"h")
	}
}

// running reports whether pid is a live process (a zombie, killed and not
// yet reaped, is not).
func running(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) S …: the state follows the last ')'.
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

// remove kills the processes in namespace ns, deletes the veth whose host
// end is hostDev (which deletes its peer) and the namespace.
func remove(ns, hostDev string) error {
	var first error
	note := func(err error) {
		if first == nil {
			first = err
		}
	}
	if out, err := output("ip", "netns", "pids", ns); err == nil {
		// Only processes inside this package's own namespace: a server
		// whose parent was killed before it could stop it.
		for _, p := range strings.Fields(out) {
			if pid, err := strconv.Atoi(p); err == nil && pid != os.Getpid() {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	if exists("ip", "link", "show", hostDev) {
		if err := run("ip", "link", "del", hostDev); err != nil {
			note(err)
		}
	}
	if exists("ip", "netns", "pids", ns) {
		if err := run("ip", "netns", "del", ns); err != nil {
			note(err)
		}
	}
	return first
}

// exists reports whether a command that names an object succeeds.
func exists(argv ...string) bool {
	_, err := output(argv...)
	return err == nil
}

func run(argv ...string) error {
	_, err := output(argv...)
	return err
}

func output(argv ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	c := exec.Command(argv[0], argv[1:]...)
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		return "", fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
