package main

import (
	"strings"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/recfs/recfs/source/httprange"
	"github.com/recfs/recfs/source/s3"
)

// Flags of the S3 sources: every command that takes a record file takes an
// s3://bucket/key URL too, reaching the store the way AWS tools do (the
// environment, ~/.aws/config and credentials, instance roles), with these
// for S3-compatible stores.
const (
	flagS3Endpoint  = "s3-endpoint"
	flagS3PathStyle = "s3-path-style"
	flagS3Region    = "s3-region"
	flagS3Cache     = "s3-cache"
	// Deadlines and bounds (s3.Options says what each bounds).
	flagS3ConnectTimeout   = "s3-connect-timeout"
	flagS3FirstByteTimeout = "s3-first-byte-timeout"
	flagS3IdleTimeout      = "s3-idle-timeout"
	flagS3RetryBudget      = "s3-retry-budget"
	flagS3Attempts         = "s3-attempts"
	flagS3ListMaxPages     = "s3-list-max-pages"
	flagS3ListMaxBytes     = "s3-list-max-bytes"
)

// registerS3Flags adds the S3 flags to a command's flag set.
func registerS3Flags(fs *pflag.FlagSet) {
	fs.String(flagS3Endpoint, "", "S3-compatible store for s3:// sources, http(s)://host[:port] (default $AWS_ENDPOINT_URL, else AWS)")
	fs.Bool(flagS3PathStyle, false, "path-style S3 addressing (automatic for an IP address or localhost endpoint)")
	fs.String(flagS3Region, "", "S3 region (default from the AWS configuration, else us-east-1)")
	fs.String(flagS3Cache, "64M", "memory cache of an s3:// object's bytes (1 MiB blocks)")
	fs.Duration(flagS3ConnectTimeout, s3.DefaultConnectTimeout, "S3: longest wait for a connection")
	fs.Duration(flagS3FirstByteTimeout, s3.DefaultFirstByteTimeout, "S3: longest wait for a response once the request is sent")
	fs.Duration(flagS3IdleTimeout, s3.DefaultIdleTimeout, "S3: longest pause between the bytes of a request or response")
	fs.Duration(flagS3RetryBudget, s3.DefaultRetryBudget, "S3: longest time for one request, all its attempts included, and for each MiB of a response; a read waits no longer (then EIO)")
	fs.Int(flagS3Attempts, s3.DefaultMaxAttempts, "S3: attempts of a request before it fails (pauses of 100ms, 200ms, ... between them)")
	fs.Int(flagS3ListMaxPages, s3.DefaultListMaxPages, "S3: pages (of up to 1,000 keys) a directory listing may take; past it the listing ends with a log line")
	fs.String(flagS3ListMaxBytes, "64M", "S3: names (counted with 128 bytes each beside their length) a directory listing may hold; past it the listing ends with a log line")
}

// s3ClientOptions returns the client options of a command's S3 flags.
func s3ClientOptions(cmd *cobra.Command) (s3.Options, error) {
	fl := cmd.Flags()
	var o s3.Options
	if fl.Lookup(flagS3Cache) == nil {
		return o, nil // a command without S3 flags
	}
	o.Endpoint, _ = fl.GetString(flagS3Endpoint)
	o.PathStyle, _ = fl.GetBool(flagS3PathStyle)
	o.Region, _ = fl.GetString(flagS3Region)
	cache, _ := fl.GetString(flagS3Cache)
	n, err := parseSize(cache)
	if err != nil || n < s3.DefaultBlockSize {
		return o, usagef("--%s %q: want a size of at least 1M", flagS3Cache, cache)
	}
	o.CacheBytes = n
	for _, d := range []struct {
		flag string
		to   *time.Duration
	}{{flagS3ConnectTimeout, &o.ConnectTimeout}, {flagS3FirstByteTimeout, &o.FirstByteTimeout},
		{flagS3IdleTimeout, &o.IdleTimeout}, {flagS3RetryBudget, &o.RetryBudget}} {
		if *d.to, _ = fl.GetDuration(d.flag); *d.to <= 0 {
			return o, usagef("--%s %v: want a duration above 0", d.flag, *d.to)
		}
	}
	if o.MaxAttempts, _ = fl.GetInt(flagS3Attempts); o.MaxAttempts < 1 {
		return o, usagef("--%s %d: want at least 1", flagS3Attempts, o.MaxAttempts)
	}
	if o.ListMaxPages, _ = fl.GetInt(flagS3ListMaxPages); o.ListMaxPages < 1 {
		return o, usagef("--%s %d: want at least 1", flagS3ListMaxPages, o.ListMaxPages)
	}
	lb, _ := fl.GetString(flagS3ListMaxBytes)
	if o.ListMaxBytes, err = parseSize(lb); err != nil || o.ListMaxBytes <= 0 {
		return o, usagef("--%s %q: want a size above 0", flagS3ListMaxBytes, lb)
	}
	if logrus.IsLevelEnabled(logrus.DebugLevel) {
		o.SDKLog = cmd.ErrOrStderr() // -v: the SDK's own lines too
	}
	return o, nil
}

// remoteMountFlags refuses what a mount of a remote source cannot do.
func remoteMountFlags(f *mountFlags, src string) error {
	switch {
	case f.rw:
		return usagef("--rw: %s sources are read-only", strings.SplitN(src, ":", 2)[0]+"://")
	}
	return nil
}

// HTTP source flags (httprange.Options says what each bounds).
const (
	flagHTTPTimeout = "http-timeout"
	flagHTTPCache   = "http-cache"
)

// registerHTTPFlags adds the http(s):// source flags to a command's flag
// set.
func registerHTTPFlags(fs *pflag.FlagSet) {
	fs.Duration(flagHTTPTimeout, httprange.DefaultTimeout, "http(s):// sources: longest time for one request, its attempts and its body included; a read waits no longer (then EIO)")
	fs.String(flagHTTPCache, "64M", "memory cache of an http(s):// file's bytes (1 MiB blocks)")
}

// httpOptions returns the client options of a command's HTTP flags.
func httpOptions(cmd *cobra.Command) (httprange.Options, error) {
	var o httprange.Options
	fl := cmd.Flags()
	if fl.Lookup(flagHTTPTimeout) == nil {
		return o, nil
	}
	if o.Timeout, _ = fl.GetDuration(flagHTTPTimeout); o.Timeout <= 0 {
		return o, usagef("--%s %v: want a duration above 0", flagHTTPTimeout, o.Timeout)
	}
	cache, _ := fl.GetString(flagHTTPCache)
	n, err := parseSize(cache)
	if err != nil || n < httprange.DefaultBlockSize {
		return o, usagef("--%s %q: want a size of at least 1M", flagHTTPCache, cache)
	}
	o.CacheBytes = n
	return o, nil
}
