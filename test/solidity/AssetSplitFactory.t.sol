// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {AssetSplit} from "../../contracts/AssetSplit.sol";
import {AssetSplitFactory} from "../../contracts/AssetSplitFactory.sol";
import {PaymentRouter} from "../../contracts/PaymentRouter.sol";
import {TestStablecoin} from "../../contracts/TestStablecoin.sol";
import {IAssetSplitFactory} from "../../contracts/interfaces/IAssetSplitFactory.sol";
import {SplitAddress} from "../../contracts/libraries/SplitAddress.sol";

/// @dev The few cheatcodes these tests use (no forge-std in this project).
interface Vm {
    function expectRevert(bytes calldata revertData) external;
    function prank(address sender) external;
    function warp(uint256 timestamp) external;
    function assume(bool condition) external pure;
    function addr(uint256 privateKey) external pure returns (address);
    function sign(uint256 privateKey, bytes32 digest) external pure returns (uint8 v, bytes32 r, bytes32 s);
}

/// @notice Fuzz tests of the factory splits: for any device key and recipients the split is created exactly where
/// the factory and the router derive it, other recipients never land on it (no squat), the router pays an order
/// only through the split of the order's own device, recipient changes wait for the delay, can be cancelled by the
/// asset owner and locked, and keep what was accrued with the recipients of the time.
contract AssetSplitFactoryFuzzTest {
    Vm private constant vm = Vm(0x7109709ECfa91a80626fF3989D68f67F5b1DD12D);
    uint256 private constant QUOTE_SIGNER_KEY = 0x5157;
    address private constant OWNER = address(0xA11CE);
    address private constant OPERATOR = address(0xB0B);
    address private constant PROTOCOL = address(0xC4A7);
    address private constant NEW_OWNER = address(0xD00D);
    address private constant MANAGER = address(0x3A9A);
    uint48 private constant DELAY = 2 days;

    TestStablecoin private token;
    PaymentRouter private router;
    AssetSplitFactory private factory;

    function setUp() public {
        token = new TestStablecoin("USD Coin (test)", "USDC", address(this));
        router = new PaymentRouter(address(this), 0);
        factory = new AssetSplitFactory(
            IERC20(address(token)), address(router), PROTOCOL, [uint16(5000), 4000, 1000], address(this), 0, DELAY
        );
        factory.grantRole(factory.SPLIT_MANAGER_ROLE(), MANAGER);
        router.grantRole(router.QUOTE_SIGNER_ROLE(), vm.addr(QUOTE_SIGNER_KEY));
        router.setSplitFactory(factory);
        token.mint(address(this), type(uint128).max);
        token.approve(address(router), type(uint256).max);
    }

    function _order(uint256 orderId, bytes32 deviceId, address split, uint256 amount)
        private
        view
        returns (PaymentRouter.PaymentOrder memory)
    {
        return PaymentRouter.PaymentOrder({
            orderId: orderId,
            deviceId: deviceId,
            token: address(token),
            split: split,
            amount: amount,
            expiry: uint64(block.timestamp)
        });
    }

    function _pay(PaymentRouter.PaymentOrder memory order) private {
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(QUOTE_SIGNER_KEY, router.hashOrder(order));
        router.pay(order, abi.encodePacked(r, s, v));
    }

    /// @dev Proposes (as the manager), waits for the delay and executes (as anyone) a recipient change.
    function _changeRecipients(bytes32 assetKey, address assetOwner, address operator) private {
        vm.prank(MANAGER);
        factory.proposeRecipients(assetKey, assetOwner, operator);
        vm.warp(block.timestamp + DELAY);
        factory.executeRecipients(assetKey);
    }

    function testFuzz_createSplitDeploysWhereFactoryAndRouterDeriveIt(bytes32 deviceKey, address creator) public {
        bytes32 assetKey = factory.assetKeyOf(deviceKey, OWNER, OPERATOR);
        require(assetKey == keccak256(abi.encode(deviceKey, OWNER, OPERATOR)), "documented asset key");
        address predicted = factory.predictSplit(assetKey);
        require(predicted == SplitAddress.predict(address(factory), address(token), assetKey), "library formula");
        require(!factory.isSplitCreated(assetKey), "not created yet");
        vm.prank(creator); // anyone may create
        address split = factory.createSplit(deviceKey, OWNER, OPERATOR);
        require(split == predicted, "created at the predicted address");
        require(split.code.length == 45, "an EIP-1167 clone");
        require(factory.isSplitCreated(assetKey), "created");
        (address[3] memory recipients, uint16[3] memory bps) = AssetSplit(split).legs();
        require(recipients[0] == OWNER && recipients[1] == OPERATOR && recipients[2] == PROTOCOL, "recipients");
        require(bps[0] == 5000 && bps[1] == 4000 && bps[2] == 1000, "shares");
        vm.expectRevert(abi.encodeWithSelector(IAssetSplitFactory.SplitAlreadyCreated.selector, assetKey, split));
        factory.createSplit(deviceKey, OWNER, OPERATOR);
    }

    /// @dev A squatter who creates a device's split first with recipients of its own lands at another address:
    /// the device's split, created later with its own recipients, pays them.
    function testFuzz_aSquatterNeverTakesTheSplitOfOtherRecipients(bytes32 deviceKey, address squatOwner, address squatOperator)
        public
    {
        vm.assume(squatOwner != address(0) && squatOperator != address(0));
        vm.assume(squatOwner != OWNER || squatOperator != OPERATOR);
        address squat = factory.createSplit(deviceKey, squatOwner, squatOperator);
        bytes32 assetKey = factory.assetKeyOf(deviceKey, OWNER, OPERATOR);
        require(squat != factory.predictSplit(assetKey), "the squat is elsewhere");
        require(!factory.isSplitCreated(assetKey), "the device's split is still free");
        address split = factory.createSplit(deviceKey, OWNER, OPERATOR);
        (address[3] memory recipients,) = AssetSplit(split).legs();
        require(recipients[0] == OWNER && recipients[1] == OPERATOR, "the device's own recipients");
    }

    /// @dev A proposed change takes effect only after the delay, executed by anyone; the asset owner cancels it
    /// before; once locked, the manager can propose nothing.
    function testFuzz_recipientChangesWaitAndCanBeCancelledOrLocked(bytes32 deviceKey, uint48 early, address executor)
        public
    {
        address split = factory.createSplit(deviceKey, OWNER, OPERATOR);
        bytes32 assetKey = factory.assetKeyOf(deviceKey, OWNER, OPERATOR);
        vm.prank(MANAGER);
        uint48 executableAt = factory.proposeRecipients(assetKey, NEW_OWNER, NEW_OWNER);
        require(executableAt == block.timestamp + DELAY, "executable after the delay");
        vm.warp(block.timestamp + early % DELAY);
        vm.expectRevert(
            abi.encodeWithSelector(IAssetSplitFactory.RecipientsChangeNotReady.selector, assetKey, executableAt)
        );
        factory.executeRecipients(assetKey);

        vm.prank(OWNER);
        factory.cancelRecipients(assetKey);
        vm.warp(executableAt);
        vm.expectRevert(abi.encodeWithSelector(IAssetSplitFactory.NoPendingRecipients.selector, assetKey));
        factory.executeRecipients(assetKey);

        vm.prank(MANAGER);
        factory.proposeRecipients(assetKey, NEW_OWNER, OPERATOR);
        vm.warp(block.timestamp + DELAY);
        vm.prank(executor);
        factory.executeRecipients(assetKey);
        (address[3] memory recipients,) = AssetSplit(split).legs();
        require(recipients[0] == NEW_OWNER && recipients[1] == OPERATOR, "changed");

        vm.prank(NEW_OWNER);
        factory.lockRecipients(assetKey);
        vm.prank(MANAGER);
        vm.expectRevert(abi.encodeWithSelector(IAssetSplitFactory.RecipientsAreLocked.selector, assetKey));
        factory.proposeRecipients(assetKey, OWNER, OPERATOR);
    }

    function testFuzz_routerPaysOnlyThroughTheOrdersOwnDeviceSplit(
        bytes32 deviceA,
        bytes32 deviceB,
        uint256 orderId,
        uint256 amountSeed
    ) public {
        vm.assume(deviceA != deviceB);
        uint256 amount = 1 + amountSeed % type(uint96).max;
        address splitA = factory.createSplit(deviceA, OWNER, OPERATOR);
        address splitB = factory.createSplit(deviceB, NEW_OWNER, OPERATOR);
        bytes32 keyA = factory.assetKeyOf(deviceA, OWNER, OPERATOR);

        PaymentRouter.PaymentOrder memory wrong = _order(orderId, keyA, splitB, amount);
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(QUOTE_SIGNER_KEY, router.hashOrder(wrong));
        vm.expectRevert(abi.encodeWithSelector(PaymentRouter.TokenNotAllowed.selector, address(token), splitB));
        router.pay(wrong, abi.encodePacked(r, s, v));

        _pay(_order(orderId, keyA, splitA, amount));
        require(token.balanceOf(splitA) == amount && token.balanceOf(splitB) == 0, "only device A's split is paid");
        uint256[3] memory legs = AssetSplit(splitA).previewSplit(amount);
        require(AssetSplit(splitA).claimable(OWNER) == legs[0], "owner credited");
        require(AssetSplit(splitA).claimable(OPERATOR) == legs[1], "operator credited");
        require(AssetSplit(splitA).claimable(PROTOCOL) == legs[2], "protocol credited");
        require(AssetSplit(splitA).surplus() == 0, "no surplus");
    }

    function testFuzz_recipientChangesKeepWhatWasAccrued(bytes32 deviceKey, uint256 grossSeed1, uint256 grossSeed2)
        public
    {
        uint256 gross1 = 1 + grossSeed1 % (type(uint96).max / 2);
        uint256 gross2 = 1 + grossSeed2 % (type(uint96).max / 2);
        address split = factory.createSplit(deviceKey, OWNER, OPERATOR);
        bytes32 assetKey = factory.assetKeyOf(deviceKey, OWNER, OPERATOR);
        _pay(_order(1, assetKey, split, gross1));
        uint256[3] memory legs1 = AssetSplit(split).previewSplit(gross1);
        _changeRecipients(assetKey, NEW_OWNER, OPERATOR);
        _pay(_order(2, assetKey, split, gross2));
        uint256[3] memory legs2 = AssetSplit(split).previewSplit(gross2);

        require(AssetSplit(split).claimable(OWNER) == legs1[0], "the former owner keeps its accrual");
        require(AssetSplit(split).claimable(NEW_OWNER) == legs2[0], "the new owner gets the later settlement");
        require(AssetSplit(split).claimable(OPERATOR) == legs1[1] + legs2[1], "operator gets both");
        require(AssetSplit(split).claimable(PROTOCOL) == legs1[2] + legs2[2], "protocol gets both");
        require(token.balanceOf(split) == gross1 + gross2, "balance is what is owed");
    }
}
