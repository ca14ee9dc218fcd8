package conf

import (
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sluice-hpc/sluice/internal/tres"
)

// StoreKind is the accounting store Sluice uses.
type StoreKind string

// The accounting stores. SQLite is embedded (the default); PostgreSQL is
// for production and multi-cluster sites.
const (
	StoreSQLite   StoreKind = "sqlite"
	StorePostgres StoreKind = "pgsql"
)

// AccountingConfig holds the AccountingStorage* keys. Sluice keeps Slurm's
// vocabulary for its own store choice: AccountingStorageType names the
// store and AccountingStorageLoc where it lives (docs/differences.md).
type AccountingConfig struct {
	// StorageType is AccountingStorageType as written
	// (default accounting_storage/sqlite).
	StorageType string
	// Store is the store Sluice opens.
	Store StoreKind
	// Loc is the SQLite file (default StateSaveLocation/sluice.db) or the
	// PostgreSQL URL/DSN (AccountingStorageLoc).
	Loc string
	// Host, BackupHost, Port (default 6819), User and Pass are kept for
	// PostgreSQL connection defaults and for compatibility.
	Host       string
	BackupHost string
	Port       int
	User       string
	Pass       string
	// Enforce is AccountingStorageEnforce (default none).
	Enforce EnforceFlags
	// TRES are the tracked TRES: Slurm's defaults (billing, cpu, energy,
	// mem, node, fs/disk, vmem, pages) plus AccountingStorageTRES.
	TRES []string
	// StoreFlags is AccountingStoreFlags (job_comment, job_script, ...).
	StoreFlags []string

	locSet bool
}

// defaultTrackedTRES are the TRES Slurm always tracks.
var defaultTrackedTRES = []string{"billing", "cpu", "energy", "mem", "node", "fs/disk", "vmem", "pages"}

// setStorageType maps Slurm's plugin names to a Sluice store. slurmdbd,
// mysql and none mean the embedded SQLite store, with a warning.
func (a *AccountingConfig) setStorageType(v string, warn func(string)) error {
	a.StorageType = v
	switch strings.ToLower(strings.TrimPrefix(strings.ToLower(v), "accounting_storage/")) {
	case "sqlite":
		a.Store = StoreSQLite
	case "pgsql", "postgres", "postgresql":
		a.Store = StorePostgres
	case "slurmdbd", "mysql", "none":
		a.Store = StoreSQLite
		warn(fmt.Sprintf("%s: Sluice uses its embedded SQLite store (accounting_storage/sqlite); set accounting_storage/pgsql for PostgreSQL", v))
	default:
		return fmt.Errorf("invalid value %s (accounting_storage/sqlite or accounting_storage/pgsql)", quote(v))
	}
	return nil
}

// finish fills the defaults that depend on other keys: the SQLite file
// lives in StateSaveLocation; a PostgreSQL store without
// AccountingStorageLoc is built from AccountingStorageHost/Port/User.
func (a *AccountingConfig) finish(stateSave string) error {
	if a.Store == "" {
		a.Store = StoreSQLite
		a.StorageType = "accounting_storage/sqlite"
	}
	if a.locSet {
		return nil
	}
	if a.Store == StoreSQLite {
		a.Loc = filepath.Join(stateSave, "sluice.db")
		return nil
	}
	if a.Host == "" {
		return fmt.Errorf("accounting_storage/pgsql needs AccountingStorageLoc (a PostgreSQL URL or DSN) or AccountingStorageHost")
	}
	port := a.Port
	if port == 6819 {
		port = 5432 // 6819 is slurmdbd's port; PostgreSQL listens on 5432
	}
	u := url.URL{Scheme: "postgres", Host: fmt.Sprintf("%s:%d", a.Host, port), Path: "/sluice"}
	if a.User != "" {
		u.User = url.UserPassword(a.User, a.Pass)
		if a.Pass == "" {
			u.User = url.User(a.User)
		}
	}
	a.Loc = u.String()
	return nil
}

// parseTrackedTRES canonicalises AccountingStorageTRES and adds it to the
// defaults, which cannot be removed (slurm.conf(5)).
func parseTrackedTRES(v string) ([]string, error) {
	names, err := tres.ParseNames(v)
	if err != nil {
		return nil, err
	}
	out := append(append([]string(nil), defaultTrackedTRES...), names...)
	tres.SortNames(out)
	return slices.Compact(out), nil
}
