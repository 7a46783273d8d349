package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"

	"github.com/recfs/recfs/cmd/internal/progress"
	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/fs/open"
	"github.com/recfs/recfs/fs/open/mounting"
	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/index/report"
)

// Exit statuses of the recfs command.
const (
	exitOK      = 0 // success
	exitFailure = 1 // runtime failure, or verify found damage
	exitUsage   = 2 // bad command line
)

// usageError marks an error as the user's command line being wrong; run
// exits with status 2 for it.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef returns a usageError with a formatted message.
func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// exitError asks run to exit with a given status. When silent, the command
// has already told the user everything (verify's report) and run prints
// nothing more.
type exitError struct {
	code   int
	silent bool
	err    error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// exitCode maps an error returned by a command to the process exit status.
func exitCode(err error) int {
	var ee *exitError
	var ue usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue), report.IsUsage(err):
		return exitUsage
	}
	// Errors cobra makes itself while parsing the command line.
	msg := err.Error()
	for _, p := range []string{"unknown command ", "unknown flag", "unknown shorthand flag", "required flag", "flag needs an argument", "invalid argument "} {
		if strings.HasPrefix(msg, p) {
			return exitUsage
		}
	}
	return exitFailure
}

// run executes the recfs command line args and returns the exit status. All
// output goes to stdout and stderr, so tests run it in-process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runTree(ctx, newRootCmdFor(stdout, stderr, commandsFor(args)), args, stderr)
}

// runTree executes args with the command tree root, whose output goes to
// stderr for errors, and returns the exit status.
func runTree(ctx context.Context, root *cobra.Command, args []string, stderr io.Writer) int {
	if helperMode(args, isCommand(root)) {
		mounting.RestoreEnv()
		margs, err := helperArgs(args)
		if err = helperArity(root, args, err); err != nil {
			return printError(args, stderr, err, exitCode(err))
		}
		args = margs
	}
	ctx = context.WithValue(ctx, argvKey{}, args)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	code := exitCode(err)
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		// SIGINT or SIGTERM: the command stopped where it was.
		err, code = errInterrupted, exitFailure
	}
	var ee *exitError
	if !errors.As(err, &ee) || !ee.silent {
		printError(args, stderr, err, code)
	}
	if code == exitUsage && cmd != nil && !jsonRequested(args) {
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
	}
	return code
}

// printError tells err, which ends the command line args, on stderr (as
// JSON under --json) and returns code, the exit status.
func printError(args []string, stderr io.Writer, err error, code int) int {
	if jsonRequested(args) {
		writeJSONError(stderr, err, code)
	} else {
		fmt.Fprintln(stderr, "recfs:", err)
	}
	return code
}

// errInterrupted is what a command stopped by SIGINT or SIGTERM reports.
var errInterrupted = errors.New("interrupted")

// isCommand returns a test of whether a word names a command of root
// (cobra adds help and completion only when it executes).
func isCommand(root *cobra.Command) func(string) bool {
	return func(name string) bool {
		switch name {
		case "help", "completion", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
			return true
		}
		c, _, err := root.Find([]string{name})
		return err == nil && c != root
	}
}

// argvKey is the context key of the command line run executes (after a
// mount helper's argv is translated), which --daemon runs again.
type argvKey struct{}

// globalFlags are the flags every command accepts.
type globalFlags struct {
	verbose   bool
	logFormat string
}

func init() {
	// Let a subcommand's own PersistentPreRun hooks run after the root's,
	// so logging is always configured. Set once here: newRootCmd runs in
	// parallel tests, and this is a package variable of cobra.
	cobra.EnableTraverseRunHooks = true
}

// newRootCmd builds the command tree with every command.
func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	return newRootCmdFor(stdout, stderr, commandsFor(nil))
}

// newRootCmdFor builds the root command with the top-level commands cmds.
func newRootCmdFor(stdout, stderr io.Writer, cmds []command) *cobra.Command {
	g := &globalFlags{}
	root := &cobra.Command{
		Use:   "recfs",
		Short: "Mount record files as directories, or inspect them",
		Example: `  recfs sample /tmp/recfs-sample      # sample files to try the commands on
  recfs info events.log
  recfs cat events.log 0 5-9 --sep '\n'
  recfs mount events.log /mnt/ev
  recfs man | man -l -                # the manual`,
		Args:          noCommand,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			cmd.SetOut(cmd.ErrOrStderr())
			_ = cmd.Usage()
			return usagef("missing command")
		},
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			return setupLogging(g, cmd.ErrOrStderr())
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(flagError)
	root.SuggestionsMinimumDistance = 2 // cobra's default, which SuggestionsFor does not apply
	if len(cmds) == 1 {
		// A command line that starts with a command's name runs that
		// command (cobra descends into it and never returns to the root):
		// the root's description, version and completion command, which
		// read the decoder list, the build information and four shells'
		// help, would be built for nothing.
		root.CompletionOptions.DisableDefaultCmd = true
	} else {
		root.Long, root.Version = rootLong(), version()
	}
	g.register(root)

	for _, c := range cmds {
		root.AddCommand(c.build())
	}
	wrapArgs(root)
	return root
}

// register adds the flags of every command to root, bound to g.
func (g *globalFlags) register(root *cobra.Command) {
	pf := root.PersistentFlags()
	pf.BoolVarP(&g.verbose, "verbose", "v", false, "log debug messages")
	pf.StringVar(&g.logFormat, "log-format", "text", "log format: text or json")
	pf.Bool("json", false, "print results as JSON (errors as JSON objects on standard error)")
	_ = root.RegisterFlagCompletionFunc("log-format", fixedCompletion("text", "json"))
}

// wrapArgs makes the positional-argument validators of cmd and its
// descendants return usage errors, so a wrong argument count exits with 2
// whoever wrote the command.
func wrapArgs(cmd *cobra.Command) {
	if v := cmd.Args; v != nil {
		cmd.Args = func(c *cobra.Command, args []string) error {
			if err := v(c, args); err != nil {
				return usageError{err}
			}
			return nil
		}
	}
	for _, c := range cmd.Commands() {
		wrapArgs(c)
	}
}

// setupLogging points logrus's standard logger at w with the level and
// format the global flags ask for.
func setupLogging(g *globalFlags, w io.Writer) error {
	l := logrus.StandardLogger()
	l.SetOutput(w)
	l.SetLevel(logrus.InfoLevel)
	if g.verbose {
		l.SetLevel(logrus.DebugLevel)
	}
	switch g.logFormat {
	case "text":
		l.SetFormatter(&logrus.TextFormatter{})
	case "json":
		l.SetFormatter(&logrus.JSONFormatter{})
	default:
		return usagef("invalid --log-format %q (want text or json)", g.logFormat)
	}
	return nil
}

// fixedCompletion completes a flag value from a fixed list.
func fixedCompletion(values ...string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}

// sourceFlags are the flags of every command that opens a record file.
type sourceFlags struct {
	format          string
	strict          bool
	cacheDir        string
	noCache         bool
	legacyTransform string
	unmasked        bool
}

// addSourceFlags registers the source flags on cmd and returns them.
func addSourceFlags(cmd *cobra.Command) *sourceFlags {
	s := &sourceFlags{}
	fs := cmd.Flags()
	fs.StringVar(&s.format, "format", "auto", "record format: auto or "+formatList("or"))
	fs.BoolVar(&s.strict, "strict", false, "refuse a damaged file instead of skipping the damage")
	fs.StringVar(&s.cacheDir, "cache-dir", "", "directory of saved indexes (default <user cache dir>/recfs)")
	fs.BoolVar(&s.noCache, "no-cache", false, "neither load nor save an index; always scan the file")
	fs.StringVar(&s.legacyTransform, "legacy-transform", "", `legacy packed recordio data is raw-DEFLATE compressed: "flate" (implied by a .grail-rpk-gz name)`)
	fs.BoolVar(&s.unmasked, "unmasked-crc", false, "leveldb log written with unmasked CRC-32C (some old writers)")
	registerS3Flags(fs)
	registerHTTPFlags(fs)
	_ = cmd.RegisterFlagCompletionFunc("format", fixedCompletion(append([]string{"auto"}, formatNames()...)...))
	_ = cmd.RegisterFlagCompletionFunc("legacy-transform", fixedCompletion("flate"))
	_ = cmd.MarkFlagDirname("cache-dir")
	return s
}

// options turns the flags into index options; a bad value is a usage error.
func (s *sourceFlags) options() (index.Options, error) {
	var o index.Options
	if s.format != "" && s.format != "auto" {
		f, err := codec.ParseFormat(s.format)
		if err != nil {
			return o, usageError{err}
		}
		o.Format = f
	}
	o.Strict = s.strict
	o.Unmasked = s.unmasked
	switch s.legacyTransform {
	case "", "flate":
		o.LegacyTransform = s.legacyTransform
	default:
		return o, usagef("invalid --legacy-transform %q (the only legacy transform is flate)", s.legacyTransform)
	}
	if s.noCache && s.cacheDir != "" {
		return o, usagef("--no-cache and --cache-dir contradict each other")
	}
	o.CacheDir = s.cacheDir
	if s.noCache {
		o.CacheDir = "-"
	}
	return o, nil
}

// openOptions are the options of open's calls for a command: o and the
// S3 and HTTP flags, with a progress bar on a terminal while an index is
// built (a daemon child reports it to its parent instead).
func openOptions(cmd *cobra.Command, o index.Options) (open.Options, error) {
	s3o, err := s3ClientOptions(cmd)
	if err != nil {
		return open.Options{}, err
	}
	ho, err := httpOptions(cmd)
	if err != nil {
		return open.Options{}, err
	}
	return open.Options{Index: o, S3: s3o, HTTP: ho, Progress: func(what string) (func(done, total int64), func()) {
		if bar := progress.New(cmd.ErrOrStderr(), what); bar != nil {
			return bar.Update, bar.Done
		}
		if daemonChild() {
			// The parent of a daemon draws the bar on its terminal.
			return daemonStatus().Progress, func() {}
		}
		return nil, func() {}
	}}, nil
}

// openTable opens the record file at path (or URL) with o; see open.Table.
func openTable(cmd *cobra.Command, path string, o index.Options) (*index.Table, error) {
	oo, err := openOptions(cmd, o)
	if err != nil {
		return nil, err
	}
	return open.Table(cmd.Context(), path, oo)
}

// openSequential opens the record file at path (or URL) for a pass in
// file order; see open.Sequential.
func openSequential(cmd *cobra.Command, path string, o index.Options) (open.Seq, error) {
	oo, err := openOptions(cmd, o)
	if err != nil {
		return open.Seq{}, err
	}
	return open.Sequential(cmd.Context(), path, oo)
}
