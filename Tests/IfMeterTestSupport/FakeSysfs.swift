import Foundation

/// A throwaway sysfs tree for classifier tests: `class/net/NAME/…`, bus devices, drivers.
public final class FakeSysfs: @unchecked Sendable {
    public let root: String

    public init() throws {
        root = FileManager.default.temporaryDirectory
            .appendingPathComponent("ifmeter-sysfs-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    /// What one fake interface has in sysfs.
    public struct Interface: Sendable {
        public var files: [String: String] = [:]
        public var directories: [String] = []
        /// Path of the bus device under `devices/`, e.g. `pci0000:00/0000:00:03.0`.
        public var device: String?
        public var driver: String?
        /// Paths under `devices/` to create, e.g. a modem's `usb1/1-1/1-1:1.2/tty/ttyACM0`.
        public var extraDevicePaths: [String] = []

        public init(
            files: [String: String] = [:], directories: [String] = [], device: String? = nil,
            driver: String? = nil, extraDevicePaths: [String] = []
        ) {
            self.files = files
            self.directories = directories
            self.device = device
            self.driver = driver
            self.extraDevicePaths = extraDevicePaths
        }
    }

    public func add(_ name: String, _ interface: Interface) throws {
        let manager = FileManager.default
        let base = "\(root)/class/net/\(name)"
        try manager.createDirectory(atPath: base, withIntermediateDirectories: true)
        for (file, contents) in interface.files {
            try contents.write(toFile: "\(base)/\(file)", atomically: false, encoding: .utf8)
        }
        for directory in interface.directories {
            try manager.createDirectory(atPath: "\(base)/\(directory)", withIntermediateDirectories: true)
        }
        for path in interface.extraDevicePaths {
            try manager.createDirectory(atPath: "\(root)/devices/\(path)", withIntermediateDirectories: true)
        }
        guard let device = interface.device else { return }
        let devicePath = "\(root)/devices/\(device)"
        try manager.createDirectory(atPath: devicePath, withIntermediateDirectories: true)
        try manager.createSymbolicLink(atPath: "\(base)/device", withDestinationPath: devicePath)
        if let driver = interface.driver {
            let driverPath = "\(root)/bus/drivers/\(driver)"
            try manager.createDirectory(atPath: driverPath, withIntermediateDirectories: true)
            try manager.createSymbolicLink(atPath: "\(devicePath)/driver", withDestinationPath: driverPath)
        }
    }
}
