package app

import (
	"fmt"
	"net/url"

	"github.com/shoal-ml/shoal/domain/core"
)

// StoreEnv is the environment variable that may hold the store's URL. A
// process's command line is readable by every process on its host
// (/proc/PID/cmdline), jobs included; its environment is not (only by its
// own user and root), so a URL with a password belongs here or in the
// config file's store:, never in --store.
const StoreEnv = "SHOAL_STORE"

// storeURLAdvice is where a store URL with a password goes instead of
// the command line.
const storeURLAdvice = "put the URL in " + StoreEnv + " or in the config file's store:"

// resolveStore picks the store's URL: the --store flag, else the
// SHOAL_STORE environment variable, else the config file's store: ("" is
// SQLite in the data dir). A password in the flag is refused when root
// (the server's jobs run on this host, as other accounts, and can read its
// command line) and is otherwise a warning, returned for the log.
func resolveStore(flag, env, config string, root bool) (raw, warning string, err error) {
	switch {
	case flag != "":
		warning, err = CheckCommandLineURL("--store", flag, storeURLAdvice, root)
		return flag, warning, err
	case env != "":
		return env, "", nil
	}
	return config, "", nil
}

// CheckCommandLineURL refuses, when root, a store URL given in the
// command-line flag named flag that carries a password, saying what to do
// instead (advice); when not root it returns the same text as a warning,
// since then the only other users that could read it are the operator's
// own processes. A URL without a password passes.
func CheckCommandLineURL(flag, raw, advice string, root bool) (warning string, err error) {
	if !urlHasPassword(raw) {
		return "", nil
	}
	msg := fmt.Sprintf("%s: a password on the command line is readable by every process on this host, including jobs: %s", flag, advice)
	if root {
		return "", &core.Error{Code: core.EINVALID, Field: flag, Message: msg}
	}
	return msg, nil
}

// urlHasPassword reports whether a store URL carries a password, in its
// user info (postgres://user:secret@host) or in its query
// (?password=secret, which pgx also reads).
func urlHasPassword(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false // not a URL: openStore refuses it, without echoing it
	}
	if _, ok := u.User.Password(); ok {
		return true
	}
	return u.Query().Get("password") != ""
}
