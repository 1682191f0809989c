import IfMeterCore
import IfMeterHistory
@testable import IfMeterStore
import IfMeterTestSupport
import Testing

@Suite("Scopes in the store: the scope map's rows, and applications' entries keyed by scope", .ownThread,
       .timeLimit(.minutes(2)))
struct ScopeRowsTests {
    @Test("the scope map's state and scoped application entries are written and read back")
    func roundTrip() throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.database)
        var pending = PendingWrites()
        let local = ScopeCounterKey(ifindex: 2, scope: .local), internet = ScopeCounterKey(ifindex: 2, scope: .internet)
        pending.scopes = ScopeCounterState(bootID: "b", mapID: 9, counters: [local: traffic(1, 2, 3, 4), internet: .zero])
        let firefoxLocal = AppCounterKey(cgroupID: 400, ifindex: 2, scope: .local)
        let firefoxInternet = AppCounterKey(cgroupID: 400, ifindex: 2, scope: .internet)
        pending.apps = AppCounterWrite(bootID: "b", mapID: 7, replaceAll: true,
                                       counters: [firefoxLocal: traffic(10, 0, 1, 0), firefoxInternet: traffic(0, 20, 0, 2)],
                                       removedCounters: [], names: [400: "app:1000/firefox"], removedNames: [])
        try store.writer.save(&pending)
        let history = try store.loader.history()
        #expect(history.scopes == ScopeCounterState(bootID: "b", mapID: 9, counters: [local: traffic(1, 2, 3, 4), internet: .zero]))
        #expect(history.apps?.counters == [firefoxLocal: traffic(10, 0, 1, 0), firefoxInternet: traffic(0, 20, 0, 2)])
        // The next save replaces the rows: a link no longer covered has none.
        pending.scopes = ScopeCounterState(bootID: "b", mapID: 10)
        pending.apps = AppCounterWrite(bootID: "b", mapID: 7, replaceAll: false, counters: [:], removedCounters: [firefoxLocal],
                                       names: [:], removedNames: [])
        try store.writer.save(&pending)
        #expect(try store.loader.history().scopes == ScopeCounterState(bootID: "b", mapID: 10))
        #expect(try store.loader.history().apps?.counters == [firefoxInternet: traffic(0, 20, 0, 2)])
    }

    @Test("schema 6's application entries come through the migration as scope 0, the key's old padding, counting on")
    func migration() throws {
        let directory = try TemporaryDirectory()
        do {
            let connection = try SQLiteConnection(path: directory.database, create: true)
            for migration in Schema.migrations.prefix(6) { try connection.execute(migration, "test") }
            try connection.execute("""
                INSERT INTO app_counters VALUES (400, 2, 10, 20, 1, 2);
                INSERT INTO meter (key, value) VALUES ('apps_boot_id', 'b'), ('apps_map_id', '7');
                PRAGMA user_version = 6;
                PRAGMA application_id = \(Schema.applicationID);
                """, "test")
        }
        let store = try Store(path: directory.database)
        #expect(try store.connection.scalarInt("PRAGMA user_version", "test") == Int64(Schema.version))
        let history = try store.loader.history()
        #expect(history.apps?.counters == [AppCounterKey(cgroupID: 400, ifindex: 2, scope: .local): traffic(10, 20, 1, 2)])
        #expect(history.scopes == nil)
    }
}
