//go:build !recfs_lean

package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"

	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/codec/decoders"
	"github.com/recfs/recfs/fs/open"
	"github.com/recfs/recfs/fs/open/daemon"
	"github.com/recfs/recfs/fs/open/serving"
	netserve "github.com/recfs/recfs/fs/serve"
	"github.com/recfs/recfs/index"
)

// The servers of `recfs serve`, in recfs-full only (the lean link leaves
// out net/http's server, WebDAV and NFS; serve.go has the commands' flags
// and help).

// credentials returns the credentials the flags ask for (nil: none).
func (f *serveFlags) credentials() (*netserve.Credentials, error) {
	pass := f.pass
	if pass == "" {
		pass = os.Getenv(envPass)
	}
	switch {
	case f.user != "" && f.htpasswd != "":
		return nil, usagef("--user and --htpasswd: give one")
	case f.htpasswd != "":
		return netserve.LoadHtpasswd(f.htpasswd)
	case f.user != "" && pass == "":
		return nil, usagef("--user needs --pass or $%s", envPass)
	case f.user == "" && f.pass != "":
		return nil, usagef("--pass goes with --user")
	case f.user != "":
		return netserve.NewCredentials(f.user, pass)
	}
	return nil, nil
}

// serveSetup is what validate makes of a serve command line.
type serveSetup struct {
	cacheMem int64
	creds    *netserve.Credentials
	tls      *tls.Config
	iopts    index.Options
	srcAbs   string
	plan     *decoders.Plan
}

// validate checks the flags and the source, loading the credentials and
// the TLS certificate they name.
func (f *serveFlags) validate(ctx context.Context, src string) (*serveSetup, error) {
	if err := f.decode.check(); err != nil {
		return nil, err
	}
	s := &serveSetup{}
	var err error
	if s.cacheMem, err = parseSize(f.cacheMem); err != nil {
		return nil, usagef("--cache-mem: %v", err)
	}
	if s.creds, err = f.credentials(); err != nil {
		return nil, err
	}
	if s.tls, err = f.loadTLS(); err != nil {
		return nil, err
	}
	if err := netserve.CheckExposure(ctx, f.addr, s.creds != nil || f.anyone); err != nil {
		return nil, err
	}
	if s.iopts, err = f.src.options(); err != nil {
		return nil, err
	}
	if s.srcAbs, err = open.Resolve(src); err != nil {
		return nil, err
	}
	if s.plan, err = f.decode.plan(decode.Output{}); err != nil {
		return nil, err
	}
	return s, nil
}

// loadTLS loads the certificate --tls-cert and --tls-key name (nil: none).
func (f *serveFlags) loadTLS() (*tls.Config, error) {
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return nil, usagef("--tls-cert and --tls-key go together")
	}
	if f.tlsCert == "" {
		return nil, nil
	}
	return netserve.LoadTLS(f.tlsCert, f.tlsKey)
}

// runServeCmd runs a parsed `recfs serve PROTOCOL` command line: it
// checks it and the source, then serves (from a background process with
// --daemon). A daemon child's error goes to its waiting parent too.
func runServeCmd(cmd *cobra.Command, f *serveFlags, src string) (err error) {
	defer func() { daemonStatus().Fail(err) }()
	s, err := f.validate(cmd.Context(), src)
	if err != nil {
		return err
	}
	if f.daemon && daemonStatus() == nil {
		return spawnDaemon(cmd, daemonSpec{logFile: f.logFile, src: s.srcAbs, what: "the server of " + s.srcAbs, none: "nothing is served",
			ready: func(pid int, logPath, info string) error { return printDaemonServing(cmd, pid, logPath, info) }})
	}
	return f.run(cmd, s)
}

// run opens the tree s names and serves it over f's protocol until the
// command's context ends.
func (f *serveFlags) run(cmd *cobra.Command, s *serveSetup) error {
	ctx, p := cmd.Context(), f.proto
	if daemonChild() {
		daemon.SetupLog()
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent) // a long-lived server, as a mount
	}
	oo, err := openOptions(cmd, s.iopts)
	if err != nil {
		return err
	}
	oo.Decode = s.plan
	lg := logrus.WithField("protocol", p.name)
	srv, err := serving.Start(ctx, s.srcAbs, serving.Options{
		Tree:     open.TreeOptions{Options: oo, HideOther: f.hideOther, Follow: f.follow, CacheMem: s.cacheMem},
		Protocol: p.name, Addr: f.addr, MaxConns: f.maxConns, Credentials: s.creds, TLS: s.tls,
		Follow: f.follow, FollowInterval: f.followInterval,
		IdleTimeout: f.idleTimeout, RequestTimeout: f.requestTimeout, Logger: lg,
	})
	if err != nil {
		return err
	}
	defer srv.Close()
	if err := announceServing(cmd, p, s, srv.Addr(), srv.URL(p.name, s.tls != nil), lg); err != nil {
		return err
	}
	err = srv.Run(ctx)
	lg.Info("stopped")
	return err
}

// announceServing says where the server listening at addr is: in the log,
// to the daemon's parent or on standard output, and to systemd.
func announceServing(cmd *cobra.Command, p protocol, s *serveSetup, addr, url string, lg logrus.FieldLogger) error {
	lg.WithFields(logrus.Fields{"source": s.srcAbs, "url": url}).Info("serving")
	if daemonChild() {
		info, err := json.Marshal(servingLine(p, s.srcAbs, addr, url))
		if err != nil {
			return err
		}
		daemonStatus().Serving(string(info))
	} else if err := printServing(cmd, p, s.srcAbs, addr, url); err != nil {
		return err
	}
	if _, err := daemon.NotifyReady(fmt.Sprintf("%s served over %s at %s", s.srcAbs, p.name, url)); err != nil {
		lg.WithError(err).Warn("systemd readiness notification failed")
	}
	return nil
}

// servingLine is what the start-up line says.
func servingLine(p protocol, src, addr, url string) map[string]any {
	return map[string]any{"status": "serving", "protocol": p.name, "source": src, "addr": addr, "url": url, "pid": os.Getpid()}
}

// printServing prints the start-up line: where the server listens.
func printServing(cmd *cobra.Command, p protocol, src, addr, url string) error {
	if wantJSON(cmd) {
		return printJSON(cmd.OutOrStdout(), servingLine(p, src, addr, url))
	}
	_, err := fmt.Fprintf(cmd.OutOrStdout(), "serving %s over %s at %s\n", src, p.name, url)
	return err
}

// printDaemonServing prints the start-up line of a daemon child (pid) from
// the servingLine it reported (info), with its pid and log.
func printDaemonServing(cmd *cobra.Command, pid int, logPath, info string) error {
	var v map[string]any
	if err := json.Unmarshal([]byte(info), &v); err != nil {
		return fmt.Errorf("daemon %d serves, but its start-up line %q: %w", pid, info, err)
	}
	v["pid"], v["daemon"] = pid, true
	if logPath != "" {
		v["log"] = logPath
	}
	if wantJSON(cmd) {
		return printJSON(cmd.OutOrStdout(), v)
	}
	line := fmt.Sprintf("serving %v over %v at %v (daemon pid %d", v["source"], v["protocol"], v["url"], pid)
	if logPath != "" {
		line += ", log " + logPath
	}
	_, err := fmt.Fprintln(cmd.OutOrStdout(), line+")")
	return err
}
