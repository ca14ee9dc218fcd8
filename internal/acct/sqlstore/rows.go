package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/sluice-hpc/sluice/internal/acct"
)

// table describes how one kind of record maps to a table: its columns
// (the first is the key) and how to turn the state into rows.
type table struct {
	name string
	cols []string
	rows func(st *acct.State) (map[string][]any, error)
}

var tables = []table{
	{"clusters", []string{"name"}, clusterRows},
	{"accounts", []string{"name", "parent", "description", "organization"}, accountRows},
	{"users", []string{"name", "default_account", "admin_level"}, userRows},
	{"qos", []string{"id", "name", "priority", "attrs"}, qosRows},
	{"assocs", []string{"id", "cluster", "account", "username", "partition_name", "parent_id", "shares", "qos", "default_qos", "priority", "limits"}, assocRows},
	{"tres", []string{"id", "type", "name"}, tresRows},
	{"meta", []string{"name", "value"}, metaRows},
}

func clusterRows(st *acct.State) (map[string][]any, error) {
	out := map[string][]any{}
	for n := range st.Clusters {
		out[n] = []any{n}
	}
	return out, nil
}

func accountRows(st *acct.State) (map[string][]any, error) {
	out := map[string][]any{}
	for n, a := range st.Accounts {
		out[n] = []any{n, a.Parent, a.Description, a.Organization}
	}
	return out, nil
}

func userRows(st *acct.State) (map[string][]any, error) {
	out := map[string][]any{}
	for n, u := range st.Users {
		out[n] = []any{n, u.DefaultAccount, int64(u.AdminLevel)}
	}
	return out, nil
}

func qosRows(st *acct.State) (map[string][]any, error) {
	out := map[string][]any{}
	for _, q := range st.QOS {
		attrs, err := json.Marshal(q)
		if err != nil {
			return nil, fmt.Errorf("encode QOS %s: %w", q.Name, err)
		}
		out[fmt.Sprint(q.ID)] = []any{q.ID, q.Name, q.Priority, string(attrs)}
	}
	return out, nil
}

func assocRows(st *acct.State) (map[string][]any, error) {
	out := map[string][]any{}
	for id, a := range st.Assocs {
		limits, err := json.Marshal(a.AssocLimits)
		if err != nil {
			return nil, fmt.Errorf("encode association %d: %w", id, err)
		}
		var qos any // NULL: inherit from the parent
		if a.QOS != nil {
			qos = strings.Join(a.QOS, ",")
		}
		out[fmt.Sprint(id)] = []any{id, a.Cluster, a.Account, a.User, a.Partition, a.ParentID, a.Shares,
			qos, a.DefaultQOS, int64(a.Priority), string(limits)}
	}
	return out, nil
}

func tresRows(st *acct.State) (map[string][]any, error) {
	out := map[string][]any{}
	for _, t := range st.TRES {
		out[fmt.Sprint(t.ID)] = []any{t.ID, t.Type, t.Name}
	}
	return out, nil
}

func metaRows(st *acct.State) (map[string][]any, error) {
	return map[string][]any{
		"last_assoc_id": {"last_assoc_id", st.LastAssocID},
		"last_qos_id":   {"last_qos_id", st.LastQOSID},
	}, nil
}

// writeDiff writes what changed from old to cur: deleted and changed rows
// are deleted first, then new and changed rows inserted, so unique keys
// never collide mid-way.
func (s *Store) writeDiff(ctx context.Context, tx *sql.Tx, old, cur *acct.State) error {
	for _, t := range tables {
		before, err := t.rows(old)
		if err != nil {
			return err
		}
		after, err := t.rows(cur)
		if err != nil {
			return err
		}
		if err := s.writeTable(ctx, tx, t, before, after); err != nil {
			return fmt.Errorf("write %s: %w", t.name, err)
		}
	}
	return nil
}

func (s *Store) writeTable(ctx context.Context, tx *sql.Tx, t table, before, after map[string][]any) error {
	del := s.rebind(fmt.Sprintf("DELETE FROM %s WHERE %s = ?", t.name, t.cols[0]))
	ins := s.rebind(fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", t.name, strings.Join(t.cols, ", "),
		strings.TrimSuffix(strings.Repeat("?, ", len(t.cols)), ", ")))
	var gone, put []string
	for k, row := range before {
		if nr, ok := after[k]; !ok || !reflect.DeepEqual(nr, row) {
			gone = append(gone, k)
		}
	}
	for k, row := range after {
		if or, ok := before[k]; !ok || !reflect.DeepEqual(or, row) {
			put = append(put, k)
		}
	}
	sort.Strings(gone)
	sort.Strings(put)
	for _, k := range gone {
		if _, err := tx.ExecContext(ctx, del, before[k][0]); err != nil {
			return err
		}
	}
	for _, k := range put {
		if _, err := tx.ExecContext(ctx, ins, after[k]...); err != nil {
			return err
		}
	}
	return nil
}

// readState reads the whole accounting state.
func (s *Store) readState(ctx context.Context, tx *sql.Tx) (*acct.State, error) {
	st := emptyState()
	steps := []func(context.Context, *sql.Tx, *acct.State) error{
		readClusters, readAccounts, readUsers, readQOS, readAssocs, readTRES, readMeta,
	}
	for _, f := range steps {
		if err := f(ctx, tx, st); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// each runs q and calls scan for every row.
func each(ctx context.Context, tx *sql.Tx, q string, scan func(*sql.Rows) error) error {
	rows, err := tx.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return rows.Err()
}

func readClusters(ctx context.Context, tx *sql.Tx, st *acct.State) error {
	return each(ctx, tx, "SELECT name FROM clusters", func(r *sql.Rows) error {
		var c acct.Cluster
		if err := r.Scan(&c.Name); err != nil {
			return err
		}
		st.Clusters[c.Name] = &c
		return nil
	})
}

func readAccounts(ctx context.Context, tx *sql.Tx, st *acct.State) error {
	return each(ctx, tx, "SELECT name, parent, description, organization FROM accounts", func(r *sql.Rows) error {
		var a acct.Account
		if err := r.Scan(&a.Name, &a.Parent, &a.Description, &a.Organization); err != nil {
			return err
		}
		st.Accounts[a.Name] = &a
		return nil
	})
}

func readUsers(ctx context.Context, tx *sql.Tx, st *acct.State) error {
	return each(ctx, tx, "SELECT name, default_account, admin_level FROM users", func(r *sql.Rows) error {
		var u acct.User
		var lvl int64
		if err := r.Scan(&u.Name, &u.DefaultAccount, &lvl); err != nil {
			return err
		}
		u.AdminLevel = acct.AdminLevel(lvl)
		st.Users[u.Name] = &u
		return nil
	})
}

func readQOS(ctx context.Context, tx *sql.Tx, st *acct.State) error {
	return each(ctx, tx, "SELECT id, name, priority, attrs FROM qos", func(r *sql.Rows) error {
		var id, prio int64
		var name, attrs string
		if err := r.Scan(&id, &name, &prio, &attrs); err != nil {
			return err
		}
		q := acct.NewQOS(name)
		if err := json.Unmarshal([]byte(attrs), q); err != nil {
			return fmt.Errorf("decode QOS %s: %w", name, err)
		}
		q.ID, q.Name, q.Priority = id, name, prio
		st.QOS[name] = q
		return nil
	})
}

func readAssocs(ctx context.Context, tx *sql.Tx, st *acct.State) error {
	q := "SELECT id, cluster, account, username, partition_name, parent_id, shares, qos, default_qos, priority, limits FROM assocs"
	return each(ctx, tx, q, func(r *sql.Rows) error {
		a := &acct.Association{AssocLimits: acct.NoAssocLimits()}
		var qos sql.NullString
		var prio int64
		var limits string
		if err := r.Scan(&a.ID, &a.Cluster, &a.Account, &a.User, &a.Partition, &a.ParentID, &a.Shares,
			&qos, &a.DefaultQOS, &prio, &limits); err != nil {
			return err
		}
		if qos.Valid {
			a.QOS = []string{}
			if qos.String != "" {
				a.QOS = strings.Split(qos.String, ",")
			}
		}
		a.Priority = acct.Limit(prio)
		if err := json.Unmarshal([]byte(limits), &a.AssocLimits); err != nil {
			return fmt.Errorf("decode association %d: %w", a.ID, err)
		}
		st.Assocs[a.ID] = a
		return nil
	})
}

func readTRES(ctx context.Context, tx *sql.Tx, st *acct.State) error {
	return each(ctx, tx, "SELECT id, type, name FROM tres", func(r *sql.Rows) error {
		var t acct.TRESRecord
		if err := r.Scan(&t.ID, &t.Type, &t.Name); err != nil {
			return err
		}
		st.TRES[t.Key()] = &t
		return nil
	})
}

func readMeta(ctx context.Context, tx *sql.Tx, st *acct.State) error {
	return each(ctx, tx, "SELECT name, value FROM meta", func(r *sql.Rows) error {
		var n string
		var v int64
		if err := r.Scan(&n, &v); err != nil {
			return err
		}
		switch n {
		case "last_assoc_id":
			st.LastAssocID = v
		case "last_qos_id":
			st.LastQOSID = v
		}
		return nil
	})
}
