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
    function assume(bool condition) external pure;
    function addr(uint256 privateKey) external pure returns (address);
    function sign(uint256 privateKey, bytes32 digest) external pure returns (uint8 v, bytes32 r, bytes32 s);
}

/// @notice Fuzz tests of the factory splits: for any asset key the split is created exactly where the factory and
/// the router derive it, the router pays an order only through the split of the order's own device, and
/// recipient changes keep what was accrued with the recipients of the time.
contract AssetSplitFactoryFuzzTest {
    Vm private constant vm = Vm(0x7109709ECfa91a80626fF3989D68f67F5b1DD12D);
    uint256 private constant QUOTE_SIGNER_KEY = 0x5157;
    address private constant OWNER = address(0xA11CE);
    address private constant OPERATOR = address(0xB0B);
    address private constant PROTOCOL = address(0xC4A7);
    address private constant NEW_OWNER = address(0xD00D);

    TestStablecoin private token;
    PaymentRouter private router;
    AssetSplitFactory private factory;

    function setUp() public {
        token = new TestStablecoin("USD Coin (test)", "USDC", address(this));
        router = new PaymentRouter(address(this), 0);
        factory = new AssetSplitFactory(IERC20(address(token)), address(router), PROTOCOL, [uint16(5000), 4000, 1000], address(this), 0);
        factory.grantRole(factory.SPLIT_CREATOR_ROLE(), address(this));
        factory.grantRole(factory.SPLIT_MANAGER_ROLE(), address(this));
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

    function testFuzz_createSplitDeploysWhereFactoryAndRouterDeriveIt(bytes32 assetKey) public {
        address predicted = factory.predictSplit(assetKey);
        require(predicted == SplitAddress.predict(address(factory), address(token), assetKey), "library formula");
        require(!factory.isSplitCreated(assetKey), "not created yet");
        address split = factory.createSplit(assetKey, OWNER, OPERATOR);
        require(split == predicted, "created at the predicted address");
        require(split.code.length == 45, "an EIP-1167 clone");
        require(factory.isSplitCreated(assetKey), "created");
        (address[3] memory recipients, uint16[3] memory bps) = AssetSplit(split).legs();
        require(recipients[0] == OWNER && recipients[1] == OPERATOR && recipients[2] == PROTOCOL, "recipients");
        require(bps[0] == 5000 && bps[1] == 4000 && bps[2] == 1000, "shares");
        vm.expectRevert(abi.encodeWithSelector(IAssetSplitFactory.SplitAlreadyCreated.selector, assetKey, split));
        factory.createSplit(assetKey, NEW_OWNER, NEW_OWNER);
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

        PaymentRouter.PaymentOrder memory wrong = _order(orderId, deviceA, splitB, amount);
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(QUOTE_SIGNER_KEY, router.hashOrder(wrong));
        vm.expectRevert(abi.encodeWithSelector(PaymentRouter.TokenNotAllowed.selector, address(token), splitB));
        router.pay(wrong, abi.encodePacked(r, s, v));

        _pay(_order(orderId, deviceA, splitA, amount));
        require(token.balanceOf(splitA) == amount && token.balanceOf(splitB) == 0, "only device A's split is paid");
        uint256[3] memory legs = AssetSplit(splitA).previewSplit(amount);
        require(AssetSplit(splitA).claimable(OWNER) == legs[0], "owner credited");
        require(AssetSplit(splitA).claimable(OPERATOR) == legs[1], "operator credited");
        require(AssetSplit(splitA).claimable(PROTOCOL) == legs[2], "protocol credited");
        require(AssetSplit(splitA).surplus() == 0, "no surplus");
    }

    function testFuzz_recipientChangesKeepWhatWasAccrued(bytes32 assetKey, uint256 grossSeed1, uint256 grossSeed2)
        public
    {
        uint256 gross1 = 1 + grossSeed1 % (type(uint96).max / 2);
        uint256 gross2 = 1 + grossSeed2 % (type(uint96).max / 2);
        address split = factory.createSplit(assetKey, OWNER, OPERATOR);
        _pay(_order(1, assetKey, split, gross1));
        uint256[3] memory legs1 = AssetSplit(split).previewSplit(gross1);
        factory.setRecipients(assetKey, NEW_OWNER, OPERATOR);
        _pay(_order(2, assetKey, split, gross2));
        uint256[3] memory legs2 = AssetSplit(split).previewSplit(gross2);

        require(AssetSplit(split).claimable(OWNER) == legs1[0], "the former owner keeps its accrual");
        require(AssetSplit(split).claimable(NEW_OWNER) == legs2[0], "the new owner gets the later settlement");
        require(AssetSplit(split).claimable(OPERATOR) == legs1[1] + legs2[1], "operator gets both");
        require(AssetSplit(split).claimable(PROTOCOL) == legs1[2] + legs2[2], "protocol gets both");
        require(token.balanceOf(split) == gross1 + gross2, "balance is what is owed");
    }
}
