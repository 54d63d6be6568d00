BEGIN TRANSACTION;
CREATE TABLE deleted (
    persistence_id TEXT PRIMARY KEY,
    sequence_nr INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE events (
    persistence_id TEXT NOT NULL,
    sequence_nr INTEGER NOT NULL,
    manifest TEXT NOT NULL,
    payload BLOB NOT NULL,
    writer TEXT NOT NULL,
    timestamp REAL NOT NULL,
    PRIMARY KEY (persistence_id, sequence_nr)
) WITHOUT ROWID;
INSERT INTO "events" VALUES('wallet-a',1,'Renamed@1',X'81A46E616D65A5616C696365','f824434ae564e567',0.0);
INSERT INTO "events" VALUES('wallet-a',2,'Credited@1',X'81A6616D6F756E740A','f824434ae564e567',0.0);
INSERT INTO "events" VALUES('wallet-a',3,'Credited@1',X'81A6616D6F756E7405','f824434ae564e567',0.0);
INSERT INTO "events" VALUES('wallet-a',4,'Credited@1',X'81A6616D6F756E7401','f824434ae564e567',0.0);
INSERT INTO "events" VALUES('wallet-a',5,'Credited@1',X'81A6616D6F756E7402','f824434ae564e567',0.0);
INSERT INTO "events" VALUES('wallet-a',6,'Renamed@1',X'81A46E616D65A2616C','f824434ae564e567',0.0);
INSERT INTO "events" VALUES('wallet-b',1,'Credited@1',X'81A6616D6F756E7407','7ac71d74703b433e',0.0);
INSERT INTO "events" VALUES('wallet-b',2,'Renamed@1',X'81A46E616D65A3626F62','7ac71d74703b433e',0.0);
CREATE TABLE snapshots (
    persistence_id TEXT NOT NULL,
    sequence_nr INTEGER NOT NULL,
    manifest TEXT NOT NULL,
    payload BLOB NOT NULL,
    timestamp REAL NOT NULL,
    PRIMARY KEY (persistence_id, sequence_nr)
) WITHOUT ROWID;
INSERT INTO "snapshots" VALUES('wallet-a',4,'Wallet@1',X'82A46E616D65A5616C696365A762616C616E636510',0.0);
CREATE TABLE states (
    persistence_id TEXT PRIMARY KEY,
    revision INTEGER NOT NULL,
    manifest TEXT NOT NULL,
    payload BLOB NOT NULL,
    deleted INTEGER NOT NULL
) WITHOUT ROWID;
COMMIT;
