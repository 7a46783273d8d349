package main

import (
	"time"

	"github.com/spf13/cobra"
)

// envPass is the environment variable --pass defaults to (so the password
// stays out of the process list).
const envPass = "RECFS_PASS"

// serveFlags are the flags of `recfs serve PROTOCOL`.
type serveFlags struct {
	proto          protocol
	src            *sourceFlags
	decode         *decodeFlags
	addr           string
	user, pass     string
	htpasswd       string
	tlsCert        string
	tlsKey         string
	anyone         bool
	maxConns       int
	idleTimeout    time.Duration
	requestTimeout time.Duration
	follow         bool
	followInterval time.Duration
	hideOther      bool
	cacheMem       string
	daemon         bool
	logFile        string
}

// protocol is one way recfs serve serves a tree.
type protocol struct {
	name, short, long, example string
	http                       bool // served by an http.Handler (auth and TLS apply)
}

var protocols = []protocol{
	{name: "webdav", http: true, short: "Serve SRC read-only over WebDAV (Finder, Explorer, davfs2, rclone)",
		long: `webdav serves the tree recfs mount would show over WebDAV, read-only:
GET with Range, ETag and Last-Modified from the source's identity, PROPFIND of
depth 0 and 1 (a directory of a million records is streamed, never built in
memory; depth infinity is refused). Every method that would change the tree
answers 403 with the reason.`,
		example: `  recfs serve webdav events.log
  rclone lsf --webdav-url http://127.0.0.1:PORT/ :webdav:
  recfs serve webdav --addr :8080 --user me --htpasswd ~/.recfs.htpasswd /data/logs`},
	{name: "http", http: true, short: "Serve SRC read-only over HTTP: files, JSON listings, a browse page",
		long: `http serves the tree recfs mount would show over plain HTTP, read-only. GET of
a file returns its bytes (with Range); a directory answers JSON with ?json or
Accept: application/json (names, sizes, record numbers, offsets, damaged
ranges; ?offset=N&limit=N page it), a browse page to a browser (records
paged, each record as text, hex and decoded, damaged ranges marked, a search
box running grep -rE over raw or decoded records), and a plain index to
anyone else (what wget -r follows). ?search=RE on a directory streams the
hits as grep -rn prints them.

Without --decode, the browse page shows each record through the decoder
--decode auto would pick, and files stay raw; with --decode, the files are
the decoded texts, as in a mount.`,
		example: `  recfs serve http --json events.log
  curl -s 'http://127.0.0.1:PORT/?json' | jq .
  curl -r 0-99 http://127.0.0.1:PORT/000042
  wget -r -np http://127.0.0.1:PORT/`},
	{name: "nfs", short: "Serve SRC read-only over NFSv3 (no FUSE needed on the client)",
		long: `nfs serves the tree recfs mount would show over NFSv3 (TCP; the MOUNT protocol
on the same port), read-only: every change answers NFS3ERR_ROFS. File handles
are derived from the source's identity and record numbers, so they survive a
restart of the server. NFS has no authentication here: a non-loopback
--addr needs --insecure-allow-anyone.`,
		example: `  recfs serve nfs --addr 127.0.0.1:2049 events.log
  mount -t nfs -o port=2049,mountport=2049,nfsvers=3,tcp,nolock 127.0.0.1:/ /mnt/ev
  nfs-cat 'nfs://127.0.0.1//000042?version=3&nfsport=2049&mountport=2049'`},
}

// newServeCmd builds `recfs serve` and its protocols: their flags and help
// are in both links, the servers only in recfs-full (serverun.go); the
// lean recfs hands a serve command line to recfs-full once it has parsed
// it (see handoff.go).
func newServeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve PROTOCOL SRC",
		Short: "Serve a record file (or a tree of them) over WebDAV, HTTP or NFS, without FUSE",
		Long: `serve shows the tree recfs mount would show (a record file, a directory of
them, an s3:// object or prefix, with --decode and --follow) to clients over
the network, read-only, where FUSE is not at hand.

It listens on 127.0.0.1 on a free port unless --addr says otherwise, and
prints the address once it serves (--json: one JSON line). An address other
machines can reach needs credentials (--user with --pass or $` + envPass + `, or
--htpasswd) unless --insecure-allow-anyone is given. SIGINT or SIGTERM stop it:
requests in progress get a few seconds to finish.`,
		Example: `  recfs serve webdav events.log
  recfs serve http --json --follow /var/lib/app/wal
  recfs serve nfs --addr 127.0.0.1:2049 s3://bucket/logs/`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("missing protocol: webdav, http or nfs")
			}
			return usagef("unknown protocol %q: want webdav, http or nfs", args[0])
		},
	}
	for _, p := range protocols {
		cmd.AddCommand(newServeProtocolCmd(p))
	}
	return cmd
}

func newServeProtocolCmd(p protocol) *cobra.Command {
	f := &serveFlags{proto: p}
	cmd := &cobra.Command{
		Use:     p.name + " SRC",
		Short:   p.short,
		Long:    p.long + "\n\n" + decodersHelp(),
		Example: p.example,
		Args:    cobra.ExactArgs(1),
	}
	f.src = addSourceFlags(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "addr", serveDefaultAddr, "address to listen on, host:port (port 0: any free port)")
	fl.BoolVar(&f.anyone, "insecure-allow-anyone", false, "serve an address other machines can reach without credentials")
	fl.IntVar(&f.maxConns, "max-conns", serveDefaultMaxConns, "connections kept open at once (beyond it the longest idle is closed)")
	idle, request := serveDefaultHTTPIdle, serveDefaultHTTPReq
	if !p.http {
		idle, request = serveDefaultNFSIdle, serveDefaultNFSReq
	}
	fl.DurationVar(&f.idleTimeout, "idle-timeout", idle, "close a connection that has no request in progress for this long")
	fl.DurationVar(&f.requestTimeout, "request-timeout", request, "close a connection whose request (HTTP: line and headers; NFS: record) does not arrive whole within this (slowloris)")
	fl.BoolVar(&f.follow, "follow", false, "show records appended to the source by any process while serving")
	fl.DurationVar(&f.followInterval, "follow-interval", 0, "with --follow: how often the source is checked (default 500ms)")
	fl.BoolVar(&f.hideOther, "hide-other", false, "in a directory tree, hide files that are not record files")
	fl.BoolVar(&f.daemon, "daemon", false, "serve from a background process; return once it listens (stop it with SIGTERM to its pid)")
	fl.StringVar(&f.logFile, "log-file", "", "with --daemon: append the daemon's log to this file, as recfs mount --log-file (default: the system log when one listens, else $XDG_STATE_HOME/recfs/daemon.log; -: none)")
	fl.StringVar(&f.cacheMem, "cache-mem", "256M", "memory for decompressed recordio and compressed TFRecord data, shared by every file served")
	if p.http {
		fl.StringVar(&f.user, "user", "", "require HTTP basic authentication as this user (with --pass or $"+envPass+")")
		fl.StringVar(&f.pass, "pass", "", "the password of --user (default $"+envPass+")")
		fl.StringVar(&f.htpasswd, "htpasswd", "", "require HTTP basic authentication by this htpasswd file (bcrypt, MD5-crypt or SHA entries)")
		fl.StringVar(&f.tlsCert, "tls-cert", "", "serve HTTPS with this PEM certificate (with --tls-key)")
		fl.StringVar(&f.tlsKey, "tls-key", "", "the PEM private key of --tls-cert")
	}
	f.decode = addDecodeFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return runServeCmd(cmd, f, args[0])
	}
	return cmd
}
