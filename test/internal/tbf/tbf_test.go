package tbf

import (
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// needRoot skips a test that cannot build links here.
func needRoot(t *testing.T) {
	t.Helper()
	if why := Missing(); why != "" {
		t.Skip(why)
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not found (the test sends through its /dev/tcp)")
	}
}

// sendFromNetns has a shell inside l's namespace send n bytes to a
// listener on l.HostIP and returns how long the receiver took to get them.
func sendFromNetns(t *testing.T, l *Link, n int) time.Duration {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(l.HostIP, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	argv := l.Command("bash", "-c", fmt.Sprintf("head -c %d /dev/zero > /dev/tcp/%s/%d", n, l.HostIP, port))
	cmd := exec.Command(argv[0], argv[1:]...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(30 * time.Second))
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	got, err := io.Copy(io.Discard, c)
	d := time.Since(start)
	if err != nil || got != int64(n) {
		t.Fatalf("received %d bytes of %d: %v", got, n, err)
	}
	return d
}

func TestLink(t *testing.T) {
	needRoot(t)
	l, err := Setup(Options{Rate: 200_000_000})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	q, err := l.Qdisc()
	if err != nil || !strings.Contains(q, "tbf") || !strings.Contains(q, "rate 200Mbit") {
		t.Fatalf("qdisc %q, %v; want a tbf of 200Mbit", q, err)
	}
	out, err := exec.Command("ip", "-n", l.Netns, "addr", "show").Output()
	if err != nil || !strings.Contains(string(out), l.NsIP+"/30") {
		t.Fatalf("namespace %s has no %s: %s %v", l.Netns, l.NsIP, out, err)
	}
	// 5 MB from the namespace at 200 Mbit/s (25 MB/s) take about 0.2 s,
	// less the 100 kB burst; unlimited, a veth carries them in
	// milliseconds. A busy machine can only make it slower.
	const n = 5_000_000
	d := sendFromNetns(t, l, n)
	t.Logf("5 MB from the namespace in %s", d)
	if rate := float64(n) * 8 / d.Seconds(); rate > 1.2*200e6 {
		t.Errorf("5 MB crossed in %s: %.0f Mbit/s, over the 200 Mbit/s limit", d, rate/1e6)
	}
	if err := l.SetRate(1_000_000_000); err != nil {
		t.Fatal(err)
	}
	if q, _ := l.Qdisc(); !strings.Contains(q, "rate 1Gbit") {
		t.Errorf("after SetRate(1e9): qdisc %q", q)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	gone(t, l.Netns, l.hostDev)
}

// gone fails the test when the namespace or the host's veth end exists.
func gone(t *testing.T, ns, dev string) {
	t.Helper()
	if exists("ip", "netns", "pids", ns) {
		t.Errorf("namespace %s still exists", ns)
	}
	if exists("ip", "link", "show", dev) {
		t.Errorf("veth %s still exists", dev)
	}
}

// TestRemoveStale builds what a process killed before its Close leaves (a
// namespace named after a pid that no longer runs, or is a zombie, its veth
// pair, a server still running inside) and checks that Setup's RemoveStale removes it and
// stops the server.
func TestRemoveStale(t *testing.T) {
	needRoot(t)
	// The owner is a zombie, as a killed bench is until its parent reaps
	// it: exited, not yet waited for.
	dead := exec.Command("true")
	if err := dead.Start(); err != nil {
		t.Fatal(err)
	}
	defer dead.Wait()
	for deadline := time.Now().Add(5 * time.Second); running(dead.Process.Pid); {
		if time.Now().After(deadline) {
			t.Fatal("true did not exit")
		}
		time.Sleep(10 * time.Millisecond)
	}
	pid := strconv.Itoa(dead.Process.Pid)
	ns, hostDev := Prefix+pid, "rtbf"+pid+"h"
	t.Cleanup(func() { remove(ns, hostDev) })
	for _, s := range [][]string{
		{"ip", "netns", "add", ns},
		{"ip", "link", "add", hostDev, "type", "veth", "peer", "name", "rtbf" + pid + "n"},
		{"ip", "link", "set", "rtbf" + pid + "n", "netns", ns},
	} {
		if err := run(s...); err != nil {
			t.Fatal(err)
		}
	}
	left := exec.Command("ip", "netns", "exec", ns, "sleep", "60")
	if err := left.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- left.Wait() }()
	RemoveStale()
	gone(t, ns, hostDev)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		left.Process.Kill()
		t.Error("the process left in the stale namespace still runs")
	}
}
