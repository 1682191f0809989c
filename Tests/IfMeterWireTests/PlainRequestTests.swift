import FoundationEssentials
import IfMeterWire
import Testing

@Suite("Plain requests")
struct PlainRequestTests {
    static let plain = [
        #"{"v":1,"cmd":"status"}"#,
        #"{"v":1,"id":7,"cmd":"interfaces"}"#,
        #" { "v" : 1 , "id" : "a b" , "cmd" : "usage" , "interface" : "eth0" , "period" : "day" } "#,
        "{\t\"v\":1,\r\"cmd\":\"events\",\"kind\":\"reset\",\"limit\":100}\r",
        #"{"v":1,"cmd":"usage","class":"wifi","period":"month","from":0,"to":253402300799,"projection":true}"#,
        #"{"v":1,"cmd":"metrics","format":"prometheus","process":false}"#,
        #"{"v":1,"cmd":"import","source":"vnstat","path":"/var/lib/vnstat/vnstat.db","dry_run":true,"utc":false}"#,
        #"{"v":1,"cmd":"query","select":"all","sum":true}"#,
        "{}",
        #"{"cmd":"status","v":0}"#,
        #"{"limit":999999999999999}"#,
    ]

    static let notPlain = [
        #"{"v":1.0,"cmd":"status"}"#, #"{"v":1e0}"#, #"{"v":-1}"#, #"{"v":01}"#, #"{"v":null}"#,
        #"{"cmd":"st\u0061tus"}"#, #"{"cmd":"stätus"}"#, #"{"cmd":"status","cmd":"status"}"#,
        #"{"cmd":"status","extra":1}"#, #"{"v":"1"}"#, #"{"cmd":1}"#, #"{"from":"2026-01-01T00:00:00Z"}"#,
        #"{"interfaces":["a"]}"#, #"{"usage":[{"period":"day"}]}"#, #"{"cmd":"status"} x"#, #"{"cmd":"status"}}"#,
        #"{"cmd":"status",}"#, #"{"cmd" "status"}"#, #"{"cmd":"status""#, "", "[]", #""status""#,
        #"{"limit":1000000000000000}"#, #"{"sum":tru}"#, #"{"sum":True}"#, "{\"cmd\":\"a\u{01}b\"}",
    ]

    @Test("a flat request of plain members reads as JSONDecoder reads it", arguments: plain)
    func readsAsDecoderDoes(line: String) throws {
        let plain = try #require(Request.plain(Array(line.utf8)), "should be plain: \(line)")
        #expect(plain == (try JSONDecoder().decode(Request.self, from: Data(line.utf8))))
    }

    @Test("anything else is left to JSONDecoder, errors and all", arguments: notPlain)
    func leftToDecoder(line: String) {
        #expect(Request.plain(Array(line.utf8)) == nil)
    }

    @Test("parse gives the same result either way, range checks included")
    func parseAgrees() throws {
        let tooLate = #"{"v":1,"id":3,"cmd":"usage","interface":"x","period":"day","from":999999999999999}"#
        guard case .failure(let error) = Request.parse(Array(tooLate.utf8)) else {
            Issue.record("out of range accepted")
            return
        }
        #expect(error.code == .badRequest && error.id == .number(3))
        guard case .success(let request) = Request.parse(Array(#"{"v":1,"cmd":"status"}"#.utf8)) else {
            Issue.record("status refused")
            return
        }
        #expect(request.cmd == "status" && request.v == 1)
    }
}
