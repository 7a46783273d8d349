package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"
)

// Errors in the user's words: the rewrites below turn messages made by
// cobra, FUSE libraries and the like into what a user can act on.

// plainError is an error whose message was rewritten; it unwraps to the
// original, so the exit status stays the original's.
type plainError struct {
	msg string
	err error
}

func (e plainError) Error() string { return e.msg }
func (e plainError) Unwrap() error { return e.err }

// fusermountExit matches go-fuse's report of a failed fusermount, whose
// number is a raw wait status (256 for exit status 1).
var fusermountExit = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`fusermount exited with code (\d+)`)
})

// inUserWords rewrites err's message where it is another program's jargon.
func inUserWords(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if m := fusermountExit().FindStringSubmatch(msg); m != nil {
		why := "fusermount3 refused the mount (its own message says why)"
		if ws, perr := strconv.Atoi(m[1]); perr == nil && syscall.WaitStatus(ws).Exited() {
			why = fmt.Sprintf("fusermount3 refused the mount (exit status %d; its own message says why)", syscall.WaitStatus(ws).ExitStatus())
		}
		return plainError{strings.TrimRight(strings.Replace(msg, m[0], why, 1), "\n "), err}
	}
	return err
}

// negativeSelection matches cobra's error for "-5" given as an argument.
var negativeSelection = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^unknown shorthand flag: '\d' in -\d+$`)
})

// flagError is the root's flag error function: a usage error, and for a
// record selection written with a leading minus ("cat f -1"), a pointer to
// last:K.
func flagError(_ *cobra.Command, err error) error {
	if negativeSelection().MatchString(err.Error()) {
		return usagef("%v: records counted from the end are last:K (last:1 is the last record)", err)
	}
	return usageError{err}
}

// noCommand is the root's argument check: a word that is not a command is
// a usage error that suggests the commands it is close to.
func noCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	return usagef("unknown command %q for %q%s", args[0], cmd.CommandPath(), suggest(cmd, args[0]))
}

// suggest returns "; did you mean X?" for the commands of root close to
// word, or "".
func suggest(root *cobra.Command, word string) string {
	s := root.SuggestionsFor(word)
	if len(s) == 0 {
		return ""
	}
	return "; did you mean " + strings.Join(s, " or ") + "?"
}

// helperArity explains a mount-helper command line whose first word may
// be a misspelt command ("recfs mnt f.log MNT").
func helperArity(root *cobra.Command, args []string, err error) error {
	if len(args) == 0 || strings.Contains(args[0], "/") {
		return err
	}
	if s := suggest(root, args[0]); s != "" {
		return usagef("%q is not a command%s (%v)", args[0], s, err)
	}
	return err
}
