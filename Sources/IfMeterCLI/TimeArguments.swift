import IfMeterPresentation

extension TimeText {
    /// `--from`/`--to` as Unix seconds; nil when not given, a usage error when unreadable.
    func argument(_ text: String?, option: String) throws(CLIError) -> Double? {
        guard let text else { return nil }
        guard let seconds = parse(text) else {
            throw .usage("\(option): cannot read \"\(text)\"; use YYYY-MM-DD, \"YYYY-MM-DD HH:MM\", RFC 3339 or @UNIXSECONDS")
        }
        return seconds
    }
}
