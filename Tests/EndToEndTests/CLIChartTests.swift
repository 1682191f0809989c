import Foundation
import IfMeterTestSupport
import Testing

/// `ifmeter chart` on the seeded history: well-formed SVG whose bars are the data, and a PNG
/// renderer draws it.
@Suite("ifmeter chart", .enabled(if: SeededDaemon.available, SeededDaemon.skipReason), .ownThread, .timeLimit(.minutes(10)))
struct CLIChartTests {
    @Test("the SVG is well-formed, its bars are the days' figures, and rsvg-convert draws them")
    func chart() throws {
        let seeded = try SeededDaemon()
        let svgPath = seeded.daemon.directory + "/days.svg"
        let drawn = try seeded.ifmeter(["chart", "days", "-i", "wwan0", "--from", "2026-03-01", "-o", svgPath])
        #expect(drawn.status == 0, "\(drawn.stderr)")
        try Command.check(["xmllint", "--noout", svgPath])
        let svg = try String(contentsOfFile: svgPath, encoding: .utf8)

        let json = try seeded.ifmeter(["days", "-i", "wwan0", "--from", "2026-03-01", "--json"])
        let usage = try #require((try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])?["usage"] as? [[String: Any]])
        let rows = try #require(usage.first?["rows"] as? [[String: Any]])
        #expect(rows.count == 30)

        // Each bar: <g class="bar" data-start data-rx-bytes data-tx-bytes> with rx and tx rects.
        let pattern = try NSRegularExpression(pattern: #"<g class="bar" data-start="(\d+)" data-rx-bytes="(\d+)" data-tx-bytes="(\d+)">.*?<rect class="rx" [^>]*height="([\d.]+)".*?<rect class="tx" [^>]*height="([\d.]+)""#)
        let bars = pattern.matches(in: svg, range: NSRange(svg.startIndex..., in: svg)).map { match in
            (1...5).map { Double(svg[Range(match.range(at: $0), in: svg)!])! }
        }
        #expect(bars.count == rows.count)
        var pixelsPerByte: Double?
        for (bar, row) in zip(bars, rows) {
            #expect(bar[0] == (row["start"] as? NSNumber)?.doubleValue)
            #expect(bar[1] == (row["rx_bytes"] as? NSNumber)?.doubleValue && bar[2] == (row["tx_bytes"] as? NSNumber)?.doubleValue)
            let scale = (bar[3] + bar[4]) / (bar[1] + bar[2])
            if let pixelsPerByte { #expect(abs(scale - pixelsPerByte) / pixelsPerByte < 0.001, "bars share one scale") }
            pixelsPerByte = pixelsPerByte ?? scale
        }
        #expect(svg.contains("wwan0: traffic by day") && svg.contains("estimate, interface-counters"))

        let pngPath = seeded.daemon.directory + "/days.png"
        try Command.check(["rsvg-convert", "-o", pngPath, svgPath])
        // Decode the PNG and count pixels in the rx and tx colours: the bars were drawn.
        let counted = try Command.check(["python3", "-c", Self.countColours, pngPath])
        let counts = counted.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        #expect(counts.count == 4)
        #expect(counts.first == 800 && counts.dropFirst().first == 410, "PNG size \(counted)")
        #expect(counts.count == 4 && counts[2] > 5000 && counts[3] > 500, "rx and tx pixels: \(counted)")
    }

    /// Prints width, height, and the number of pixels in the rx and tx colours of an RGB(A) PNG.
    static let countColours = """
        import struct, sys, zlib
        data = open(sys.argv[1], "rb").read()
        assert data[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
        pos, idat = 8, b""
        while pos < len(data):
            length, kind = struct.unpack(">I4s", data[pos:pos + 8])
            body = data[pos + 8:pos + 8 + length]
            if kind == b"IHDR": width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            if kind == b"IDAT": idat += body
            pos += 12 + length
        channels = {2: 3, 6: 4}[colour]
        raw, stride, rows, prev = zlib.decompress(idat), width * channels, [], bytearray(width * channels)
        for y in range(height):
            f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
            for i in range(stride):
                a = line[i - channels] if i >= channels else 0
                b, c = prev[i], prev[i - channels] if i >= channels else 0
                if f == 1: line[i] = (line[i] + a) & 255
                elif f == 2: line[i] = (line[i] + b) & 255
                elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
                elif f == 4:
                    p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            rows.append(line); prev = line
        def count(rgb):
            return sum(1 for line in rows for x in range(width) if tuple(line[x * channels:x * channels + 3]) == rgb)
        print(width, height, count((0x3b, 0x75, 0xaf)), count((0xef, 0x86, 0x36)))
        """
}
